# extglob groups that need backtracking, nested groups, affixes
shopt -s extglob
for w in "" a ab abc aab abab xyz a.b.c; do
	r=
	[[ $w == +(a|ab) ]] && r+=p
	[[ $w == *(a)b ]] && r+=s
	[[ $w == @(a|b)*(c) ]] && r+=c
	[[ $w == !(*.*) ]] && r+=n
	[[ $w == +(@(a|b)|c) ]] && r+=N
	[[ $w == ?(x)y?(z) ]] && r+=y
	echo "$w:$r"
done
v=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab

echo "${v##+(a)}" "${v%%*(b)}" "${v/#+(a)/X}" "${v/%b/Y}"
p='@(x|y)'; [[ y == $p ]] && echo unquoted-var; [[ y == "$p" ]] || echo quoted-var
