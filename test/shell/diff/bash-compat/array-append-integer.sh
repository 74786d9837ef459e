# [k]+=v inside ( ) appends to the element; on an integer variable += adds; declare -ia keeps -i
typeset -i x; x=(1 2 3 4 5); x=( 1 2 [2]+=7 4 5 ); echo ${x[@]}
x+=( [3]+=9 [5]=9 ); echo ${x[@]}
x[4]+=7; echo ${x[@]}
y=(a b); y+=([1]+=c [0]+=z [7]+=n); declare -p y
typeset -ia iarr=(2 2 3); iarr+=1; declare -p iarr
iarr+=(4 5); declare -p iarr
unset x; typeset x+=4; echo $x; typeset -i x+=5; echo $x
