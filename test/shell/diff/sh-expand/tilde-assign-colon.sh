p=~/a:~/b; [ "$p" = "$HOME/a:$HOME/b" ] && echo ok
