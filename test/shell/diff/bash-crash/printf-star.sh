# printf's '*' width and precision read an argument (it used to crash).
printf '[%*s]\n' 3 a
printf '[%*d]\n' 5 42
printf '[%.*s]\n' 2 abcdef
printf '[%-*s]\n' 4 a
printf '[%*.*f]\n' 8 2 3.14159
printf '[%*s]\n' -4 a
printf '[%.*s]\n' -1 abc
printf '[%*s][%*s]\n' 2 a 3 b 4 c
printf '[%.*d]\n' 3 5
printf '[%*c]\n' 3 x
printf '%0*d\n' 5 3
printf '[%*s]\n'
printf '%600d' 1 | wc -c
printf '[%5c]' '' | od -An -c
printf '[%s|%d|%c]\n' | od -An -c
printf '%--5d|%0-5d|%05.2f|%+.3e|%#o|%X|%u\n' 3 4 3.14159 12345.678 8 255 -1
printf '%-5b|\n' 'a\tb'; printf '%5.1s|\n' abc
printf '%.3s|%.0s|%.s|\n' abcdef xyz q
printf '[%*s]\n' x a; echo "status $?"
printf '%5%|\n'; echo "status $?"
