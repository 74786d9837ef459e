nosuch_shcore a b; echo st=$?
