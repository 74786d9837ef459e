for x in a b c; do echo $x; done
