set -eu; echo ${-//[^eu]/}
