readonly r=1; readonly r=2; echo after $?
