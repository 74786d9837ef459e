echo 'a  b' 'c"d' '$x'
