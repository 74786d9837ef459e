[ ~ = "$HOME" ] && echo ok
