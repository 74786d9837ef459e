if false; then echo a; else echo b; fi
