echo a; )
