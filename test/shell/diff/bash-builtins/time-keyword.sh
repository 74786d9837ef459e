time -p true 2>/dev/null; echo $?
{ time sleep 0; } 2>&1 | wc -l
time
echo end
