echo x >&7; echo $?
