trap "echo t" EXIT; trap - EXIT; echo done
