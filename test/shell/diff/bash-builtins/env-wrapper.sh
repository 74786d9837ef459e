env A=1 sh -c "echo \$A"
