x="a b"; [[ $x == "a b" ]] && echo nosplit
