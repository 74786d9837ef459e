(while :; do :; done) & (exec 3>&-; sleep 100) & wait
