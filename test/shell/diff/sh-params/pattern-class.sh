x=abc123; echo ${x%%[0-9]*} ${x##[a-z]*[a-z]}
