printf "l1\nl2\n" > f; exec 4<f; read a <&4; read b <&4; echo $a $b; exec 4<&-
