# The word of ${x-word}, ${x=word} and a pattern: a leading unquoted tilde expands, as bash
HOME=/h
unset u; echo ${u:-~} ${u:-~/x:~} "${u:-~}" ${u:-"~"} ${u:-x~}
echo ${u:=~/b:~}; echo $u
v=/h/q; echo ${v#~} "${v#~}" ${v/~/X} "${v/~/Y}" ${v%~}
echo ${u:+~}; unset u; echo "${u:=~}" $u
