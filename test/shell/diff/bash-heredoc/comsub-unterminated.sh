# an unterminated $( at the end of a script: bash's message, at the line after the last
echo before
x=$(echo four

echo "not reached"
