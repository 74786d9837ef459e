# -e in $( ) (cleared outside posix mode, kept by inherit_errexit) and in a negated pipeline
set -e
echo $(false; echo ok)
z=$(false; echo non-posix foo); echo $z
! { false; echo A $?; } | cat; echo B $?
shopt -s inherit_errexit
echo "[$(false; echo kept)]"
shopt -u inherit_errexit
set -o posix
echo "[$(false; echo posix)]"
{ false; echo C $?; } | cat; echo D $?
