# "${x:+"…"}": inside the inner double quotes a backslash quotes any character, as bash
x='&v' y='a b'
printf '<%s>\n' "${x:+-D="\p"}" "${x:+-D=\p}" "${x:+-D="\\"}" "${x:+-D="\'"}" "${x:+-D="\'$x\'"}"
printf '<%s>\n' "${x:+"$y"}" "${x:+"\$y"}" "${x:+"\"q\""}" ${x:+"\p"} "${x:+${y:+"\p"}}"
