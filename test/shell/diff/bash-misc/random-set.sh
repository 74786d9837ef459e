RANDOM=1; x=$RANDOM; [ -n "$x" ] && echo have
