x=4; echo "v=$((x*x))"
