p=a/b/c; echo ${p//\//:}
