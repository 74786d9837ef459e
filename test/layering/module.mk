# test/layering/ — the structure of the code itself: no call cycle between files.
CHECK_SCRIPTS += test/layering/calls.sh test/layering/parsers.sh
