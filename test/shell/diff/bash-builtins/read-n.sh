read -n 3 a <<< "abcdef"; echo $a
