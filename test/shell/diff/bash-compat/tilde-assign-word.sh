# A NAME=VALUE word of a command: bash expands a tilde after '=' and ':' (not in posix mode)
HOME=/usr/xyz
echo foo=bar:~ a=~:~/x b=~/q "c=~" d=~"x" f:~ g=~nosuchuser_zz
printf '<%s>\n' x=~/a*b
set -o posix
echo foo=bar:~ a=~:~/x
x=~:~; echo "$x"
