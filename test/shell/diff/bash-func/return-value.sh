f() { return 42; }; f; echo $?
