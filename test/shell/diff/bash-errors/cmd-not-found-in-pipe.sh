nosuch_shcore2 | cat; echo $?
