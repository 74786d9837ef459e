f() { echo one; }; f; f() { echo two; }; f
