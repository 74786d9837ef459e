old=$IFS; IFS=,; set -- $(echo "1,2,3"); IFS=$old; echo $# $2
