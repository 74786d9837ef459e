set -o pipefail; true | true; echo $?
