printf "%s|%s|%d\n" only
