bash -c "echo \$0 \$1" zero one
