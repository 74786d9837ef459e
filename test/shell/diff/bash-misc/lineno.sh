echo $LINENO
echo $LINENO
