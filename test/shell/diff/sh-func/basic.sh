f() { echo in f; }; f
