for a in 1 2; do for b in x y; do [ $b = y ] && continue 2; echo $a$b; done; done
