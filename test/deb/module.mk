# SPDX-License-Identifier: Apache-2.0
# test/deb/ — the Debian package built, installed, used and purged on this host
# (t-deb.sh: minutes of building, and it changes the whole host: make check-slow).
SLOW_SCRIPTS += test/deb/t-deb.sh
