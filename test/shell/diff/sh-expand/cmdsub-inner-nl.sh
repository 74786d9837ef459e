x=$(printf "a\nb"); echo "$x"
