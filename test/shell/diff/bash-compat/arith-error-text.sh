# an arithmetic error's message as bash's: "let: ", "((: ", "[[: " before the expression,
# its leading blanks dropped and its trailing ones kept; [[ -eq on a bad operand is false (1)
let "4+"; echo $?
let "1" " 1+ "; echo $?
(( 4+ )); echo $?
[[ 1 -eq 4+ ]]; echo $?
[[ 1 -eq " 4+ " ]] && echo no; echo $?
for ((i=4+;;)); do :; done; echo $?
for ((i=0; i<4+; i++)); do :; done; echo $?
( x=$(( 4+ )) ); echo $?
( echo $(( 1 + 2 3 )) ); echo $?
( echo $(( 	1 2 )) ); echo $?
