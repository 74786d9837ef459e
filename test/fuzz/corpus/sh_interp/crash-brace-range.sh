echo {Z..a}
echo {a,{b,{c,d}}}{Z..a..3}x
echo x{Z..a}y
