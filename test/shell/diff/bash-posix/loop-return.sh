# return inside a loop (its condition or its body) gives the function its status
f1() { while return 2; do :; done; }
f1; echo "f1 $?"
f2() { while :; do return 3; done; }
f2; echo "f2 $?"
f3() { for i in a b; do return 4; done; }
f3; echo "f3 $?"
f4() { until false; do return 5; done; echo no; }
f4; echo "f4 $?"
