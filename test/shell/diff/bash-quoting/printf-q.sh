printf "%q\n" "a b" "c"
