# a $( ) inside a function printed by declare -f / type: from its parse, as bash 5.2
f() { for n in $( echo 1 2 3 ); do echo "$( echo  a;echo b )" '$( x )' $(( 1 + 2 )) `echo  q` "\$( y )"; done; x=$( true ); }
declare -f f
g() { echo $( case a in a) echo b;; esac ) $(echo "$(echo  c )"); }
type g
