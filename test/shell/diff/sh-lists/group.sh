{ echo a; echo b; }
