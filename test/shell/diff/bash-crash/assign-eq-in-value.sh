# An assignment whose value holds '=' in quotes or a substitution (it used to
# crash: the value was cut at that '=' as if it were the NAME='s).
x='a=b'; echo "$x"
url="http://h/p?q=1"; echo "$url"
x=`echo a=b`; echo "$x"
foo="${p:=v}"; echo "$foo $p"
x=$(echo a=b); echo "$x"
v='k=v' w="a=b=c"; echo "$v $w"
for i in 1 2 3; do y='a=b'; z="q=$i"; done; echo "$y $z"
arr=('a=b' "c=d"); echo "${arr[@]}"
declare d='e=f'; local_test() { local l="g=h"; echo "$l"; }; local_test; echo "$d"
export E='x=y'; echo "$E"
HOME=/h
t=a=~/b; echo "$t"
t=~/a:~/b; echo "$t"
t=a:b=~/c; echo "$t"
t=$'k=\':~'; echo "$t"
t="a:~"; echo "$t"
t=a'b=:~'c:~; echo "$t"
