f() { local -a la=(1 2); echo ${#la[@]}; }; f
