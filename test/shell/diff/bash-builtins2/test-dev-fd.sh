# test and [[ ]] on /dev/fd/N: an fd the script has is there, one it has not is false, quietly
test -r /dev/fd/0; echo "r0=$?"
[[ -w /dev/fd/1 ]]; echo "w1=$?"
test -r /dev/fd/3; echo "r3=$?"
[[ -e /dev/fd/7 ]]; echo "e7=$?"
exec 4</dev/null
test -r /dev/fd/4; echo "r4=$?"
exec 4<&-
test -r /dev/fd/4; echo "r4 closed=$?"
test -e /dev/fd/99999999999; echo "big=$?"
