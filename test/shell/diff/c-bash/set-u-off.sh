echo "[$x]"; set -u; x=1; echo $x; echo ${y-def}
