a=(x); a[0]+=y; echo ${a[0]}
