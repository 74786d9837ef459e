a=$$; b=$(echo $$); [ "$a" = "$b" ] && echo same
