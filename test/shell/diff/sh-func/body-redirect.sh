f() { echo x; } > out2; f; cat out2
