readonly r=1; r=2 true; echo after $?
