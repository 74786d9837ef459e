printf "100%%\n"
