# symbolic umask; printf %(fmt)T %q with control characters, * widths
umask 022; umask u=rwx,g=rx,o=; umask; umask -S
umask g+w,o+r; umask; umask a-w; umask -S; umask u=; umask
umask q=r; echo "bad=$?"
printf '%(%Y-%m-%d %H:%M:%S)T|%(%j)T\n' 86400 0
printf '[%10(%Y)T][%-6(%m)T]\n' 0 0
printf '[%*s][%-*d][%.*s]\n' 5 ab 4 7 2 abcdef
printf '%q\n' "a b'c" $'x\ty' '' "q\"uote" $'\e[1m'
hash; hash -r; echo "hash=$?"; hash nosuchcmd-x; echo "hash=$?"
