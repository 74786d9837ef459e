false | true; echo $?
