printf "[%*s]\n" 3 a
printf "%*d|%.*s|%-*s|%*.*f\n" 5 42 2 abc 4 x 8 2 3.14
printf "%*s" 99999999999 x
