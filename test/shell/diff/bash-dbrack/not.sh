[[ ! -e nope ]] && echo notexist
