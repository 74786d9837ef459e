printf "%x %X %o %#x\n" 255 255 8 255
