set -e; case $- in *e*) echo has-e;; esac
