# SPDX-License-Identifier: Apache-2.0
# test/docs/ — the documentation links only inside the repository (and nothing in the tree
# names a file outside it: refs.sh), covers what the
# programs accept, and its policy examples decide as a running box would (policy-examples/).
CHECK_SCRIPTS += test/docs/links.sh test/docs/coverage.sh test/docs/policy-examples.sh \
	test/docs/refs.sh
