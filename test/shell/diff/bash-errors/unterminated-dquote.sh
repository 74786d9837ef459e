echo "abc
