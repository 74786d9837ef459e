echo "$(echo "in 'side'")"
