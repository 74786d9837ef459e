echo x | cat | cat | cat | cat | cat
