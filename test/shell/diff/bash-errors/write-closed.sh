echo closed >&-; echo $? >/dev/null; echo after
