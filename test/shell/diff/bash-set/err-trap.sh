trap "echo ERR caught" ERR; false; echo after
