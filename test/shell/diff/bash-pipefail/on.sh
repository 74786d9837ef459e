set -o pipefail; false | true; echo $?
