echo a | { read x; echo $x; } | cat
