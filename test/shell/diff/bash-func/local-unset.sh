f() { local u; echo "[${u-unset}]"; }; u=outer; f
