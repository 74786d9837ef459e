# A tilde prefix in ${x:-~/w} (unquoted), in the pattern of ${x#~} ${x/~/r} and in the
# replacement of ${x/p/~} (quoted or not) expands, as bash; after a ":" it does not
HOME=/home/u
v=/home/u/x:/home/u
echo ${v#~} "${v#~}" ${v%:~} ${v/~/H} "${v/~/H}" ${v//~/H} ${v/x/~} "${v/x/~}" ${v#~/} ${v:-~} "${u:-~}" ${u:-~/a}
a=~root:~root  # an assignment: after ":" too
echo ${a#~root}
echo ${v#\~} ${v#'~'}
