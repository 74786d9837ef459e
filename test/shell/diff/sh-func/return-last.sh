f() { false; }; f; echo $?
