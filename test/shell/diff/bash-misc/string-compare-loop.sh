s=; for x in c b a; do [[ $x < m ]] && s+=$x; done; echo $s
