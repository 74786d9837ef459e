# A backslash-newline is removed wherever the lexer reads it, except in single quotes
ad=Ok
a=Ba
echo $a\
d
echo $\
(echo cmdsub)
echo "$\
(echo in-dquotes)"
echo $\
(\
(\
40+\
2\
)\
)
echo "$\
(\
(6*7)\
)"
echo ${a\
d}
echo "${a\
d}" "a\
b"
echo `echo back\
quote`
echo 'single\
quote'
echo $(echo x # comment \
echo y
)
echo $( (echo sub\
shell) )
