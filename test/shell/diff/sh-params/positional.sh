set -- one two three; echo $1 $2 $3 $#
