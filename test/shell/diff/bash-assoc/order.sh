# keys come out in bash's hash order, also past the table's growth (2048 keys)
declare -A a
for k in a b c d e f g h i j k l foo bar baz 1 2 10 x y z; do a[$k]=1; done
echo "${!a[@]}"
declare -A big
for ((i = 0; i < 2100; i++)); do big[k$i]=$i; done
echo "${#big[@]}"
s=; for k in "${!big[@]}"; do s+="$k "; done
echo "$s" | md5sum
unset 'big[k7]' 'big[k2000]'
echo "${#big[@]} ${big[k8]} ${big[k7]-gone}"
