if false; then :; fi; echo $?
