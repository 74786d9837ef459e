s="line1
line2"; echo "$s"
