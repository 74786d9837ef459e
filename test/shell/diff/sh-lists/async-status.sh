(exit 5) & wait $!; echo $?
