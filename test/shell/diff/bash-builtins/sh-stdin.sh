echo "echo from-stdin" | sh
