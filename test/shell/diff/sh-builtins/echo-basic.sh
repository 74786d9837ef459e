echo a b c; echo; echo -n x; echo y
