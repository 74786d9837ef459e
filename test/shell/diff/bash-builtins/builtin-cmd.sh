builtin echo via-builtin
