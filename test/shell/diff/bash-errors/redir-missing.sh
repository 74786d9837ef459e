cat < /nonexistent-shcore; echo $?
