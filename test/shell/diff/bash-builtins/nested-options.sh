sh -e -c "false; echo no"; echo $?
bash -o pipefail -c "false | true"; echo $?
sh -x -c "echo traced" 2>&1
