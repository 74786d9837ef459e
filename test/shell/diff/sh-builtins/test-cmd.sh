test 5 -gt 3 && echo test-gt
