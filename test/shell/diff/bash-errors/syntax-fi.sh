echo a
fi
echo b
