echo 'echo "in:$1"' > l.sh; . ./l.sh
