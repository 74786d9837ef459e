# [[ =~ ]]: a quoted character inside a bracket expression stands as it is (bash)
bs='\'
[[ $bs =~ ["."] ]] && echo m1; [[ . =~ ["."] ]] && echo m2
[[ $bs =~ [\.] ]] && echo m3; [[ $bs =~ [\\] ]] && echo m4
[[ cat =~ ['[=c=]']at ]] && echo m5
[[ ']' =~ [']'] ]] && echo m6
[[ $bs =~ [^]"."] ]] && echo m7
[[ 'a.b' =~ a"."b ]] && echo dot1
[[ 'axb' =~ a"."b ]] || echo dot2
[[ 'a]' =~ ^a[]]$ ]] && echo br1
[[ 'x' =~ [^"]"] ]] && echo br2
[[ 'a' =~ [[:alpha:]"x"] ]] && echo cls
