(exit 7); echo $?
