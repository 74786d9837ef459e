[ a -lt 1 ]; echo $?
