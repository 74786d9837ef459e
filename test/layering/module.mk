# SPDX-License-Identifier: Apache-2.0
# test/layering/ — the structure of the code itself: no call cycle between files,
# no raw number parsing, each program linking only the messages it speaks, each
# daemon declared once (daemons.sh), each test in a component (components.sh), the
# shell's interpreter, commands, standalone and daemon apart (shell.sh).
CHECK_SCRIPTS += test/layering/calls.sh test/layering/parsers.sh test/layering/symbols.sh \
	test/layering/daemons.sh test/layering/components.sh test/layering/shell.sh
