x=1; : $((x+=4)); echo $x; : $((x*=2)); echo $x
