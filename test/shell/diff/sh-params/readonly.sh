readonly r=1; echo $r; (r=2) 2>/dev/null || echo cannot
