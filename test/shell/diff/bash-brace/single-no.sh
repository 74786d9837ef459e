echo {a} {}
