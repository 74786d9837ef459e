printf "a b\nc d\n" > f; { read x; read y; } < f; echo "$x/$y"
