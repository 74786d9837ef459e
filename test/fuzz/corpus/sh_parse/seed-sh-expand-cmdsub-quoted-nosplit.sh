for w in "$(echo "a b")"; do echo "<$w>"; done
