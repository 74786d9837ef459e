x=v; echo {$x,w}
