[ \( 1 = 1 \) ] && echo paren
