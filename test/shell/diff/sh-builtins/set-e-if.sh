set -e; if false; then :; fi; echo ok
