readonly ro=1; unset ro; echo $?
