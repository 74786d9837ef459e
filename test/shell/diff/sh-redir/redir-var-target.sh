n=out.txt; echo v > $n; cat out.txt
