# ${x//PAT/REP}: the pattern's first character is never the separator, so PAT may start with /
v=/dev/ram
echo "${v////-}"
echo "${v///r/-}"
echo "${v///}"
echo "${v/#/x}" "${v/%/x}" "${v//\//_}"
a=(/a/b /c)
echo "${a[@]////+}"
