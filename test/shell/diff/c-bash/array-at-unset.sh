set -u; echo "[${a[@]}]"; a=(); echo "[${a[*]}]"; echo after
