false; echo $?; (exit 3); echo $?
