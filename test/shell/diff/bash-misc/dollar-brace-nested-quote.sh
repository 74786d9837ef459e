x="a b"; echo "${x/a/"q"}"
