echo 'abc
echo "x
cat <<EOF
no end
