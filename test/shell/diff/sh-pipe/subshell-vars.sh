x=1; echo | x=2; echo $x
