# env -0 (--null): each NAME=VALUE of the environment ends with a NUL, so a value may hold a
# newline (Codex's shell snapshot reads the environment so); -0 with a command is refused
env -0 -i A=1 B=2 | od -c
env --null -i "C=x
y" | od -c
env -0 -i true 2>/dev/null; echo "st=$?"
