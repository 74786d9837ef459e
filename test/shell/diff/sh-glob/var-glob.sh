touch g1 g2; p="g*"; echo $p; echo "$p"
