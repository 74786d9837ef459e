f() { :; }; type -t f
