f() { cat <<< "$1"; }; f hi
