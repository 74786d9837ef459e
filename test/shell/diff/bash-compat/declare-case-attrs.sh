# declare -u -l -c: a value assigned later is upper-, lower- or capital-cased; the last one holds
T='Be Careful WITH this'
declare -u up; up=$T; echo "$up"
declare -l lo; lo=$T; echo "$lo"
declare -c ca; ca=$T; echo "$ca"
declare -l lower=aBcDe; echo $lower; lower=ZyX; echo $lower
declare -u upper=aBcDe; echo $upper
declare -l upper; upper=MiXeD; echo $upper
declare +l upper; upper=MiXeD; echo $upper
declare -u arr=(one Two); arr+=(three); arr[5]=six; echo "${arr[@]}"
declare -p up lo ca lower
f() { local -u x=inner; echo $x; }; f
x=abc; declare -u x; echo $x; x+=def; echo $x
