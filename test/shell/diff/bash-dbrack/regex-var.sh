re="^[0-9]+$"; [[ 42 =~ $re ]] && echo num
