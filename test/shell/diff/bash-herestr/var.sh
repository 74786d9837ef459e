x=val; cat <<< $x
