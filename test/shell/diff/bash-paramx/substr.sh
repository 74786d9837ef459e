x=abcdef; echo ${x:2} ${x:1:3} ${x: -2} ${x:0:0}x
