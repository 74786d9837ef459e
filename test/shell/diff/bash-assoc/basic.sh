declare -A a
a[foo]=1 a[bar]="x y" a[baz]=3
echo "${a[foo]} ${a[bar]} ${#a[@]}"
echo "${!a[@]}"
echo "${a[@]}"
for k in "${!a[@]}"; do echo "$k=${a[$k]}"; done
unset 'a[bar]'
declare -p a
k="a b"; a[$k]=sp; a["q\"x"]=q
declare -p a
declare -A b=([one]=1 [two]=2 [three]=3)
declare -p b
b+=([four]=4)
b[one]+=x
echo "${b[one]} ${#b[@]}"
declare -A c; declare -p c
c=(); declare -p c
(( c[n]++ )); (( c[n]+=5 )); echo "${c[n]}"
declare -A d=(k1 v1 k2 v2); declare -p d
f() { local -A l=([x]=1); l[y]=2; declare -p l; }; f; declare -p l
declare -a ia=(1); declare -A ia; echo $?
echo "${a}" "${a[0]}"; a=zero; echo "${a[0]}"
[[ -v a[foo] ]] && echo set; [[ -v a[nope] ]] || echo unset
echo ${#a[foo]}
declare -Ar ro=([k]=v); declare -p ro
unset a; declare -p a
declare -A e; e[a]=1; unset 'e[@]'; declare -p e
