s=a; s+=b; s+=c; echo $s
