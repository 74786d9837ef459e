echo $(echo $(echo deep))
