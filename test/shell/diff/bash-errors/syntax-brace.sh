{ echo a }
