unset a; echo ${a[@]:-empty}
