echo "echo from-file \$1" > s.sh; sh s.sh arg
