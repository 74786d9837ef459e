echo a~b
