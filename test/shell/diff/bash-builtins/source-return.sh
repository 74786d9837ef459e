echo "return 5; echo no" > s.sh; . ./s.sh; echo $?
