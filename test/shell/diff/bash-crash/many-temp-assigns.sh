# Temporary assignments before a function or builtin: all of them, not the
# first 64 only, and all undone after it.
f() { echo "$a1 $a64 $a65 $a100"; }
cmd=
for ((i = 1; i <= 100; i++)); do cmd+="a$i=$i "; done
eval "$cmd f"
echo "[${a1-unset}] [${a100-unset}]"
a100=keep; eval "$cmd f"; echo "$a100"
