while false; do echo never; done; echo $?
