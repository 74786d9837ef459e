f() { echo piped; }; f | cat
