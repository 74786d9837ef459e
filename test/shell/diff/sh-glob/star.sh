touch a.c b.c d.h; echo *.c
