sh -c "exit 9"; echo $?
