# `.` finds a readable file in PATH (no execute bit needed)
mkdir d && echo 'echo sourced "$1"' > d/s.sh
PATH="$PWD/d:$PATH"
. s.sh x
