echo a#b #comment
echo '#x' "#y"
