printf "[%s]\n" a b c
