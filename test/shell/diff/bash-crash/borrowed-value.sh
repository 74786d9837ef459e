# An expansion that assigns the variable being expanded, while its value is
# in use: an operator's word (${x/$((x=1))/y}) or arithmetic evaluating a
# value that assigns itself (i=i=0; ((i++))). Both read freed memory.
i=i=0; (( i++ )); (( i++ )); echo "$i"
x=abcdefghijklmnopqrstuvwxyz0123456789; echo ${x/$((x=1))/y} $x
x=abcdefghijklmnopqrstuvwxyz0123456789; echo ${x:$((x=5)):1} $x
x=abcdefghijklmnopqrstuvwxyz0123456789; echo ${x#$((x=5))} $x
x=abcdefghijklmnopqrstuvwxyz0123456789; echo ${x^$((x=5))} $x
x=abcdefghijklmnopqrstuvwxyz0123456789; echo ${x/a/$((x=2))} $x
x=abcdefghijklmnopqrstuvwxyz0123456789; echo ${x%${x:=q}} $x
echo end
