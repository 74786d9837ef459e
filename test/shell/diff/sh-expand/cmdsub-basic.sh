echo "[$(echo hi)]"
