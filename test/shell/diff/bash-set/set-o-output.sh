set -o errexit; [[ -o errexit ]] && echo on
