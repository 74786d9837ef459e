# test/docs/ — the documentation links only inside the repository and covers what the
# programs accept.
CHECK_SCRIPTS += test/docs/links.sh test/docs/coverage.sh
