printf "1\n2\n" > f; while read x; do echo $x; done < f > g; cat g
