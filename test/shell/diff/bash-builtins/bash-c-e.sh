bash -ec "false; echo no"; echo $?
