echo $'\u00e9'
