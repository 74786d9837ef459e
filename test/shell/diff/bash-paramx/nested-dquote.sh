unset y; echo "${y:-"c  d"}" "${y:-'s q'}"
