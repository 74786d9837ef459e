f() { echo "$(echo sub:$1)"; }; f z
