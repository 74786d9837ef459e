x=v; echo "[${x+alt}]" "[${x:+alt}]"; unset x; echo "[${x+alt}]"; x=; echo "[${x+alt}]" "[${x:+alt}]"
