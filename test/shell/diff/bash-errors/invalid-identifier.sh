export 1x=2; echo $?
