a=([2]=two [5]=five); echo ${!a[@]} ${a[@]}
