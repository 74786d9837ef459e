false && echo a || echo b
