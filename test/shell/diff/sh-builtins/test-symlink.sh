touch t; ln -s t l; [ -L l ] && echo link; [ -L t ] || echo notlink
