x='a=b'
url="http://h/p?q=1"
x=`echo a=b`
foo="${p:=v}"
for i in 1 2; do y='a=b'; done
x=$(echo a=b); echo "$x"
