echo "~" '~' \~
