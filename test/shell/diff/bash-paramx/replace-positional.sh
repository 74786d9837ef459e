set -- xa xb; echo ${@/x/y}
