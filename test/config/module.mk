# test/config/ — golden tests of box.ini: `boxctl check` on each *.ini against
# its *.out (normalized config) or *.err (refusals); see run.sh.
CHECK_SCRIPTS += test/config/run.sh
