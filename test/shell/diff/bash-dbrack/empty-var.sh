unset x; [[ -z $x ]] && echo empty
