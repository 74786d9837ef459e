# process substitution <( ) >( ): own commands, host programs, functions, redirections
cat <(echo one; echo two)
while read -r l; do echo "got $l"; done < <(printf 'a\nb\n')
diff <(printf 'x\ny\n') <(printf 'x\nz\n'); echo "diff=$?"
/usr/bin/diff <(echo same) <(echo same) && echo host-same
echo hi > >(tr a-z A-Z); sleep 0.2
n=0; while read -r _; do n=$((n+1)); done < <(seq 1 5); echo "n=$n"
f() { cat "$1"; }; f <(echo via-func)
paste <(echo a) <(echo b)
echo "[$(cat <(echo nested))]"
mapfile -t arr < <(printf '%s\n' p q r); echo "${arr[*]}"
