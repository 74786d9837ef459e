cat <<-EOF
		indented
	EOF
