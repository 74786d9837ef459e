# A login shell reads /etc/profile, then the first of ~/.bash_profile, ~/.bash_login,
# ~/.profile (bash) or ~/.profile (dash); --noprofile reads none; the profile's exit ends it.
printf 'echo bash_profile; FROM=bp\n' >"$HOME/.bash_profile"
printf 'echo bash_login\n' >"$HOME/.bash_login"
printf 'echo profile; FROM=p\n' >"$HOME/.profile"
bash -lc 'echo "login: $FROM ${CUDA_HOME-}"; shopt -q login_shell && echo is-login'
bash --login -c 'echo "again: $FROM"'
bash --noprofile -lc 'echo "none: ${FROM-unset}"'
bash -c 'echo "not login: ${FROM-unset}"'
rm "$HOME/.bash_profile"
bash -lc 'echo "second: $FROM"'
rm "$HOME/.bash_login"
bash -lc 'echo "third: $FROM"'
sh -lc 'echo "dash: $FROM"'
printf 'echo bad; no_such_command_here\necho after\n' >"$HOME/.profile"
bash -lc 'echo "went on"' 2>&1 | sed "s|$HOME|~|"
printf 'echo leaving; exit 3\n' >"$HOME/.profile"
bash -lc 'echo not reached'
echo "rc $?"
