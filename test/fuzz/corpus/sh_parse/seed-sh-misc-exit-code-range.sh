(exit 256); echo $?; (exit 257); echo $?
