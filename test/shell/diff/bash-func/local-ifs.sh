f() { local IFS=,; echo "$*"; }; f a b c; echo "$*" x
g() { local -i n=2+3; echo $n; }; g
