[[ abc =~ ^x ]]; echo $?
