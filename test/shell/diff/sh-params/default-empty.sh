x=; echo "[${x-def}]" "[${x:-def2}]"
