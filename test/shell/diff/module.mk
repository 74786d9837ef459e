# SPDX-License-Identifier: Apache-2.0
# test/shell/diff/ — the differential corpus of box-sh's language:
# every script under sh-*/ runs in box-sh and dash, every script
# under bash-*/ in box-sh and bash; stdout, stderr and the status must agree.
# The whole corpus takes minutes: make check-slow (badinput.sh stays in make check).
SLOW_SCRIPTS  += test/shell/diff/run.sh
CHECK_DEPS    += $(BIN)/box-sh
CHECK_SCRIPTS += test/shell/diff/badinput.sh
