# SPDX-License-Identifier: Apache-2.0
# test/shell/suites/ — outside shell conformance suites: bash's own tests/ and busybox's
# shell/ash_test/ (Debian source packages, fetched by fetch.sh from scripts/deps.sh) run
# against /bin/bash and the sanitizer box-sh by run.sh. Not part of `make check` (it takes
# minutes): `make check-conformance`, run by .ci/run after make check.
# The sanitizer box-sh is built by a make of its own (SAN selects the build directory).
check-conformance:
	@scripts/deps.sh
	@$(MAKE) --no-print-directory -j$(JOBS) SAN=address,undefined build/san/bin/box-sh
	@BOX_SH=build/san/bin/box-sh test/shell/suites/run.sh

.PHONY: check-conformance
