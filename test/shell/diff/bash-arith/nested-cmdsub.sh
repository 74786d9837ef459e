echo $(( $(echo 3) + 4 ))
