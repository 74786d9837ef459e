timeout 0.2 sleep 5; echo $?
