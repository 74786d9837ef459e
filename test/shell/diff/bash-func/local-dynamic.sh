f() { local v=f; g; }; g() { echo $v; }; f
