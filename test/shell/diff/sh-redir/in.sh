printf "x\ny\n" > f; while read l; do echo "<$l>"; done < f
