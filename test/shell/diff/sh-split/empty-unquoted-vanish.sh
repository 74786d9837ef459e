x=; set -- $x; echo $#; set -- "$x"; echo $#
