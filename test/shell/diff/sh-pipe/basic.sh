echo hello | cat
