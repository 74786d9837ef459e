(( 3 > 2 )) && echo yes; (( 0 )) || echo zero
