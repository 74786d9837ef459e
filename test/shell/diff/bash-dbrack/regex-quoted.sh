[[ a.c =~ "a.c" ]] && echo q1; [[ abc =~ "a.c" ]] || echo q2
