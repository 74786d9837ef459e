s=; for c in a b c; do s="$s$c"; done; echo $s
