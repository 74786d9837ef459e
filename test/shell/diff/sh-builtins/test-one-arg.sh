[ x ] && echo one; [ "" ] || echo empty
