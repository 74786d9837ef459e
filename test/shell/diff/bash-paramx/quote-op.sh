x="a b"; echo ${x@Q}
