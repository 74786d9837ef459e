# A loop polling a background job with `kill -0` must see it end: the job is
# reaped between iterations (not left a zombie that kill -0 still finds).
sleep 1 &
p=$!
while kill -0 "$p" 2>/dev/null; do :; done
echo gone
wait "$p"
echo "status $?"
