f() { for i in 1 2 3; do [ $i = 2 ] && return 7; done; }; f; echo $?
