a=(ax bx); echo ${a[@]/x/y}
