# ${#?} ${##} ${#$}: the length of a special parameter
(exit 100); echo "${#?}"
set -- 1 2 3 4 5 6 7 8 9 10; echo "${##}"
v=$$; [ "${#v}" = "${#$}" ] && echo same
