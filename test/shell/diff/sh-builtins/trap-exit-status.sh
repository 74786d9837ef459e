trap "echo trapped \$?" EXIT; (exit 4); exit 5
