echo a


echo b
