printf "a\nb\nc\n" | xargs echo
