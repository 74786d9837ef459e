echo data > f; cat <> f
