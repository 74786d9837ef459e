echo $'a\tb\nc'
