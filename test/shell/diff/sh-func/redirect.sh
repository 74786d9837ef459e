f() { echo to-file; }; f > out; cat out
