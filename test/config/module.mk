# SPDX-License-Identifier: Apache-2.0
# test/config/ — golden tests of box.ini: `boxctl check` on each *.ini against
# its *.out (normalized config) or *.err (refusals); see run.sh.
CHECK_SCRIPTS += test/config/run.sh
# check-vs-run.sh: every case through `boxctl check` and `boxctl run` (an embedded boxd).
CHECK_SCRIPTS += test/config/check-vs-run.sh
