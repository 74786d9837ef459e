echo 'abc
