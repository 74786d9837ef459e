x=aaa; echo ${x//a/b}
