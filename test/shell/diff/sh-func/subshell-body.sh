f() ( x=in; echo $x ); x=out; f; echo $x
