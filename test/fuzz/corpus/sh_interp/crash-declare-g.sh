f(){ local -a w; g; }; g(){ declare -g w=one; }; f
h(){ local -a z; local q=1; declare -g z=(1 2) q=2; }; h; echo "${z[@]} $q"
