# test/docs/ — the documentation links only inside the repository, covers what the
# programs accept, and its policy examples decide as a running box would (policy-examples/).
CHECK_SCRIPTS += test/docs/links.sh test/docs/coverage.sh test/docs/policy-examples.sh
