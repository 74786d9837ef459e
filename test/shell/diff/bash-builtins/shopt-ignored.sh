shopt -s nullglob 2>/dev/null; echo ok
