printf "a\tb\\n\n"
