printf "%s-%s\n" a b c d
