readonly r=1; for r in a; do :; done; echo after $?
