a=(a b c); for i in ${!a[@]}; do echo $i=${a[i]}; done
