a=(1 2 [5]=x "q w"); a+=($(echo)); b=( 
