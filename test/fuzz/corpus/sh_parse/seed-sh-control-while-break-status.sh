while true; do break; done; echo $?
