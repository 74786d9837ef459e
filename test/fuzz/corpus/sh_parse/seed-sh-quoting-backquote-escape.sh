echo `echo \$HOME | tr -d /` >/dev/null; echo `echo a\\b`
