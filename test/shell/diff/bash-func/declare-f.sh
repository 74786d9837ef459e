f() { :; }; declare -F f
