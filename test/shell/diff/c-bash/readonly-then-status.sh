readonly r=1; echo before; r=2
