# `set` prints each value as bash does: raw unless it holds shell syntax, a lone quote as \'
SQUOTE="'" VHASH=ab#cd A='a b' C=$'x\ny' D='$x' E='a"b' F="a'b c" G= H=a~ I='a:~' J='~' K=a#b L='#x'
set | grep -a '^[A-L]=\|^SQUOTE=\|^VHASH='
