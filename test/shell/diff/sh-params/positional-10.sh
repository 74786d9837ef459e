set -- 1 2 3 4 5 6 7 8 9 ten eleven; echo ${10} ${11} $10
