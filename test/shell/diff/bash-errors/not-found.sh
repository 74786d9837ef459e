nosuchcommand_shcore; echo $?
