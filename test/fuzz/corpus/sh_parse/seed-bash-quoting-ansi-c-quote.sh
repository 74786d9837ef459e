echo $'it\'s'
