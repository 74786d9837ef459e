unset x; echo ${x=one}; echo $x; y=; echo ${y:=two}; echo $y
