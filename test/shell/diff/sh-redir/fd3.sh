exec 3>f3; echo three >&3; exec 3>&-; cat f3
