(echo a) & wait
(sleep 0; echo b) & wait $!
echo c
