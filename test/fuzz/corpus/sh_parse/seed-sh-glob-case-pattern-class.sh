for c in a 1 Z -; do case $c in [[:digit:]]) echo "$c digit";; [[:upper:]]) echo "$c upper";; [[:alpha:]]) echo "$c alpha";; *) echo "$c other";; esac; done
