ls /nonexistent-shcore 2>/dev/null; echo $?
