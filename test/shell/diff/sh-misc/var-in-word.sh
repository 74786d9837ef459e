x=mid; echo pre${x}post pre"$x"post
