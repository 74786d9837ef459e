printf "%d %i %5d %-5d| %05d\n" 1 2 3 4 5
