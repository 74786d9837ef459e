x=abcdefghijklmnopqrstuvwxyz0123456789; echo ${x/$((x=1))/y} ${x:$((x=5)):1}
x=abcdefghijklmnopqrstuvwxyz0123456789; echo ${x#$((x=5))} ${x^$((x=5))} ${x/a/$((x=2))}
a=(abcdefghijklmnopqrstuvwxyz0123456789 b); echo ${a[@]/$((a[0]=1))/y} ${a[0]:$((a=5)):2}
set -u; x=y+1; echo $((x))
a=(abcdefghijklmnopqrstuvwxyz0123456789 b); echo ${a[1]/$((a[1]=1))/y} ${a[0]/$((a[0]=1))/y}
