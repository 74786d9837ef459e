return 1; echo after $?
