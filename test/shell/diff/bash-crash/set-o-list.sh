# `set -o` lists bash's options in bash's format, the fixed ones included:
# scripts read it (Codex's shell snapshot keeps the "on" ones).
set -o | awk '$2=="on"{print $1}'
set -o pipefail
set -o | grep -E '^(pipefail|errexit|braceexpand)'
set +o | grep -E 'pipefail|hashall|vi$'
[[ -o braceexpand ]] && echo braceexpand on
[[ -o vi ]] || echo vi off
set -o posix; echo "posix accepted: $?"
