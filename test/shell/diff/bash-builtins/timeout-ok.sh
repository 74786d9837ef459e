timeout 5 echo fast; echo $?
