sh -c "echo nested \$0 \$1" zero one
