(echo s1; echo s2) > f; cat f
