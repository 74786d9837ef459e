echo a |
cat
