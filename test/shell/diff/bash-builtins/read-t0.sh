# read -t 0 reads nothing and assigns nothing: 0 when a read would not block (data, or end of file)
printf 'line1\nline2\n' >f
r=before
{ read -t 0 r; echo "[$?] <$r>"; read r; echo "$r"; } <f
read -t 0 r </dev/null; echo "eof: $?"
read -t 0.5 r <f; echo "$? $r"
read -t -1 r <f; echo "neg: $?"
