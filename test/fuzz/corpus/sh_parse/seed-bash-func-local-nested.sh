f() { local a=1; g; echo $a; }; g() { local a=2; echo $a; }; f
