x="a*b*c"; echo ${x#"a*"} ${x#a\*}
