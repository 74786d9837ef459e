cd /; cd /tmp; umask 0; echo x > f; cat f; read l < f; echo "$l"
