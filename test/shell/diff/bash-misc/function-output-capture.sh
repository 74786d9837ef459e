f() { echo out; return 2; }; r=$(f); echo "$r $?"
