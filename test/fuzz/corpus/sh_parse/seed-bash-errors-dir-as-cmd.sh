/; echo $?
