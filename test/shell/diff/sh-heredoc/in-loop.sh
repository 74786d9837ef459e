for i in 1 2; do cat <<EOF
i=$i
EOF
done
