printf "%c%c\n" abc def
