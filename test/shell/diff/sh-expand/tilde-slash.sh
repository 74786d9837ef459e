h=~/x; [ "$h" = "$HOME/x" ] && echo ok
