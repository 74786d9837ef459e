x=outer; sh -c "echo [\$x]"; export x; sh -c "echo [\$x]"
