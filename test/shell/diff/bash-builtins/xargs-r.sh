printf "" | xargs -r echo nothing; echo $?
