aa1=1 aa2=2; echo ${!aa*}
