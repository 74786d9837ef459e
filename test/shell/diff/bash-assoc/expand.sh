# expansions of associative arrays and their elements
declare -A m=([alpha]=one [beta]="two words" ["key with space"]=three [star]='*')
printf '<%s>\n' "${m[@]}"
printf '<%s>\n' "${!m[@]}"
echo "${m[*]}"
IFS=: ; echo "${!m[*]}"; IFS=$' \t\n'
echo "${m[beta]^^} ${m[alpha]/o/0} ${#m[beta]} ${m[key with space]}"
k=beta; echo "${m[$k]:1:3} ${m[nope]:-dflt}"
echo "${m[@]:0:2}" | wc -w
( set -u; echo "${m[alpha]}"; echo "${m[missing]}" ) 2>/dev/null || echo unbound-elem
declare -A n; n[x]=$((3+4)); n[y]=$(echo sub); echo "${n[x]} ${n[y]}"
declare -A cnt; for w in a b a c a b; do ((cnt[$w]++)); done
for w in a b c; do echo "$w ${cnt[$w]}"; done
declare -Ai ai; ai[v]=2+3; echo "${ai[v]}"
declare -p ai
h() { declare -A loc=([in]=1); echo "${loc[in]} ${#loc[@]}"; }; h; echo "${loc[in]-none}"
declare -A cp=(); for k in "${!m[@]}"; do cp[$k]=${m[$k]}; done; [[ ${cp[star]} == '*' ]] && echo copied
