x=abcab; echo ${x/#ab/X}
