echo a; echo b;echo c
