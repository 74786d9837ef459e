x=$(while :; do :; done); echo hi
