# inside `…` a backslash-newline goes, also inside quotes there (bash)
echo `echo 'foo\
bar'`
echo `echo "foo\
bar"`
echo "`echo 'foo\
bar'`"
echo "`echo "a\
b"`" `echo a\
b`
