# Replacements, prefixes and suffixes of a long value take one pass each
# (a leading-star pattern over 20000 characters took minutes).
printf -v big '%20000s'
r=${big//*a/b}; echo ${#r}
r=${big// /ab}; echo ${#r}
r=${big##* }; echo ${#r}
r=${big%% *}; echo ${#r}
r=${big#*[! ]}; echo ${#r}
big="${big}a"; r=${big//*a/b}; echo "${#r} $r"
r=${big/% /x}; echo ${#r}
# leftmost, then longest; empty matches replace nothing but in an empty value
x="abcabc aXb a.b [x] *s?"
for p in a 'b*' '*c' '?' '*' 'a?c' '[ab]' '[!a]' '[[:space:]]' '\*' '[x' 'c*a' 'x]' '\?' abc '*a*' 'b*b' '[a-c]*'; do
	echo "$p: ${x/$p/_} | ${x//$p/_} | ${x/#$p/_} | ${x/%$p/_} | ${x#$p} | ${x##$p} | ${x%$p} | ${x%%$p}"
done
y=aaa; echo "${y//a*/b} ${y//*/b} ${y/a/} ${y//a/} ${y#*a} ${y##*a} ${y%a*} ${y%%a*}"
z=; echo "[${z//*/b}] [${z/#/p}] [${z#*}] [${z%%*}]"
w='a\b*c'; echo "${w//\\/x} ${w//\*/y} ${w//[\\*]/z} ${w#*\\}"
set -- ab cb ad; echo "${@//b/X}" "${@#a}" "${@%%[bd]}"
arr=(one two three); echo "${arr[@]/#t/T}" "${arr[@]//e/E}" "${arr[*]%e}"
