echo a=b --x=y
