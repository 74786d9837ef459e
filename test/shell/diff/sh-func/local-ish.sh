f() { v=$1; echo $v; }; f a; f b
