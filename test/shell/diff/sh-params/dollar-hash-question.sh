false; echo $?; true; echo $?; set -- a b; echo $#
