type -t echo; type -t if; type -t ls_shcore_nope; echo $?
