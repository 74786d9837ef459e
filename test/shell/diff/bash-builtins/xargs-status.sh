printf "1\n" | xargs sh -c "exit 3"; echo $?
