echo -E "a\tb"
