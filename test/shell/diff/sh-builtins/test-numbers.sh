[ 1 -lt 2 ] && echo lt; [ 2 -ge 2 ] && echo ge; [ 3 -eq 3 ] && echo eq; [ 3 -ne 4 ] && echo ne
