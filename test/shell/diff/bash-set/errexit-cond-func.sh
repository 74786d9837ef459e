set -e; f() { false; echo yes-in-cond; }; if f; then echo t; fi
