a=(); echo ${#a[@]}; echo "[${a[@]}]"
