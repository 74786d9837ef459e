count() { [ $1 -eq 0 ] && return; echo $1; count $(($1-1)); }; count 3
