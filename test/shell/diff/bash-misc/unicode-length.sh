s="ü€"; echo ${#s}
