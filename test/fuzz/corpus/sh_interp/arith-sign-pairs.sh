# ++ and -- increment only next to a name; elsewhere they are two signs (bash):
# 0++1 is 0 + +1, (a)+++3 is (a) + + +3, ++5 is + +5
a=3
echo 1 $((0++1)) $((0--1)) $((0+ +1)) $((1-- 2))
echo 6 $((a+++3)) $a
echo 7 $(((a)+++3)) $(((a)---3))
echo $((++5)) $((--5)) $((- -5)) $((++ a)) $a $((-- a)) $a
echo $((1 ++ 2)) $((1++(2)))
echo $((0++b))
