echo {a,b,c}
