echo toerr 1>&2 2>/dev/null; echo done
