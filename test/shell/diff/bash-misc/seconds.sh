[ $SECONDS -ge 0 ] && echo sec
