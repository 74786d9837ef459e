echo "\a\n\t"
