read -d , a <<< "x,y"; echo $a
