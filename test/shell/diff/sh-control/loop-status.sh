for i in 1; do false; done; echo $?
