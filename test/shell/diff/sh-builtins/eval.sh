x=1; eval "y=\$x; echo \$y"; eval echo a b
