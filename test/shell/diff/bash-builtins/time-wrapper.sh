{ time -p true; } 2>/dev/null; echo $?
