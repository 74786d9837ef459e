set -- a b c; echo ${#@} ${#}
