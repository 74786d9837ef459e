readonly r=1; r=2; echo after $?
