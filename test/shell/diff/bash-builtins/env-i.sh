env -i sh -c "echo [\$HOME]"
