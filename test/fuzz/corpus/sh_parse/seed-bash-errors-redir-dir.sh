echo x > /; echo $?
