echo -ne "x\ny"; echo
