[[ a == a &&
   b == b ]] && echo nl
