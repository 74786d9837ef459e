[ 1 = 1; echo $?
