(exit 42); echo $?
