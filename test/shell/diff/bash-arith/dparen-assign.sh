(( x = 5 * 2 )); echo $x
