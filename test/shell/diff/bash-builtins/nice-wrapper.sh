nice -n 1 echo niced
