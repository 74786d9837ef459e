echo a \
  b \
  c
