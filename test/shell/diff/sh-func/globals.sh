f() { x=changed; }; x=orig; f; echo $x
