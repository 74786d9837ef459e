x=abc; echo ${x#z} ${x%z}
