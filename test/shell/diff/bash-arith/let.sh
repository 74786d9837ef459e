let "a = 3 + 4"; echo $a
