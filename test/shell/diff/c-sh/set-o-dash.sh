# sh is dash: `set -o` lists dash's options in dash's format, `set +o` as commands.
set -o
set +o
set -eu
set -o | awk '$2 == "on" { print $1 }'
set +o | grep -- '-o'
