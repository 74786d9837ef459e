printf "root:x\nbin:y\nz:q\n" > pw
x=$(cat <<EOT
inside $HOME
EOT
)
echo "[$x]" | sed "s|$HOME|H|"
unset y; echo ${y:-"a  b"} "${y:-"c  d"}"
a=("p q" r); printf '<%s>\n' "${a[@]}"
v=$(case 1 in 1|2) echo one;; esac); echo $v
while IFS=: read -r u rest; do echo "$u"; done < pw | head -2
echo "${#a[@]} ${a[0]:1}"
f() { echo "args:$#"; }; f "${a[@]}"; f "${a[*]}"; f ${a[@]}
s='a\nb'; echo -e "$s" | wc -l
echo $(( $(echo 2) ** 3 ))
[[ -n $HOME && $HOME == /* ]] && echo abs
echo ${PWD##*/}
for i in $(seq 3); do printf '%d ' $i; done; echo
echo "a'b" 'c"d'
n=0; while read -r l; do n=$((n+1)); done <<< "$(printf '1\n2\n3')"; echo $n
