set -- a b c; shift; echo $@; shift 2; echo $#
