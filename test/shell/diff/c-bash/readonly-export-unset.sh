readonly r=1; export r=3; echo after $?; unset r; echo after $?
