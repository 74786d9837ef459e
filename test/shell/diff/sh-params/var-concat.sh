a=x b=y; c=$a$b; echo $c "$a-$b"
