# test/docs/ — the documentation links only inside the repository.
CHECK_SCRIPTS += test/docs/links.sh
