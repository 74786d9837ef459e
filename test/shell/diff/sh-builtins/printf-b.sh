printf "%b\n" "x\ty"
