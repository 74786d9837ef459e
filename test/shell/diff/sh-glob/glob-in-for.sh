touch k1 k2; for f in k*; do echo "file $f"; done
