(sleep 0; echo a) & (echo b) & wait; echo c
