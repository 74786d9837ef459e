echo 'a
b'; echo "c
d"
