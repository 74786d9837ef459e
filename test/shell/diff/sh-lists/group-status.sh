{ false; }; echo $?
