echo "$UID $EUID"; (UID=5) 2>/dev/null; echo "st $?"
