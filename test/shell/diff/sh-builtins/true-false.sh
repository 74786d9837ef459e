true; echo $?; false; echo $?
