{ echo a; } ; echo b
