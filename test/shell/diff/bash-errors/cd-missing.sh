cd /nonexistent-shcore; echo $?
