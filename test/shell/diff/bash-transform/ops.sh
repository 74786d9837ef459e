# ${x@op}: Q E A a K U L u on scalars, arrays and associative arrays
x="it's a	b"; echo "${x@Q}"; y=plain; echo ${y@Q}; e=; echo ${e@Q}; n=$'a\nb'; echo ${n@Q}
declare -rix v=1; echo ${v@a} ${v@A}
a=(1 "b c"); echo "${a[@]@Q}" "${a@a}" "${a[@]@A}" "${a[@]@K}"
declare -A h=([k]=v); echo "${h[@]@K}" "${h@a}" "${h[@]@A}"
z='\t\x41'; echo "${z@E}"
echo "${unset@Q}|" "${y@A}"
export ex=1; echo ${ex@A}
s='Hello wORLD'; echo "${s@U} ${s@L} ${s@u}"
set -- "a b" "it's"; echo "${@@Q}"; echo "${*@Q}"
c=$'\e[0m\x01'; echo "${c@Q}"
declare -a emp=(); echo "[${emp[@]@Q}]" "[${emp@a}]"
eval "re=${x@Q}"; [[ $re == "$x" ]] && echo roundtrip
