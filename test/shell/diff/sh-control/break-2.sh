for a in 1 2; do for b in x y; do [ $b = y ] && break 2; echo $a$b; done; done; echo out
