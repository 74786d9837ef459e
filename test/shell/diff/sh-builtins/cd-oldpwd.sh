cd /; echo $PWD; cd - >/dev/null; [ "$OLDPWD" = / ] && echo old
