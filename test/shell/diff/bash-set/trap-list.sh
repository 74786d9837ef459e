trap "echo x" EXIT; trap -p EXIT
