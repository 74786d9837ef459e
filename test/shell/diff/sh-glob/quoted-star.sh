touch f; echo "*" '*' \*
