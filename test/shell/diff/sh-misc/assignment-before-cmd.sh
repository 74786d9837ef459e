x=1 sh -c "echo \$x"; echo "[$x]"
