f() { return 3; }; f; echo $?
