# found by fuzz_sh_interp: stack-buffer-overflow (an escape kept as text, 11 bytes in 8)
echo $'\U0ddddddd' $'\U09'
echo -e "\U0ddddddd"; printf "%b\U0ddddddd\n" "\U0ddddddd"
