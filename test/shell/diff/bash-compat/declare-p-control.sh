# declare -p shows a value holding a control character as $'…', as bash
uu=(a $'i\n' "q\"d"); declare -p uu
x=$'a\tb\001'; declare -p x
declare -A m=([k]=$'v\n'); declare -p m
y='plain $x'; declare -p y
