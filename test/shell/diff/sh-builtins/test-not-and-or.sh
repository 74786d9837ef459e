[ ! -e nope ] && echo not; [ 1 = 1 -a 2 = 2 ] && echo and; [ 1 = 2 -o 2 = 2 ] && echo or
