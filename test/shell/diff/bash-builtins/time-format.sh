# the time keyword: TIMEFORMAT (%[p][l]R/U/S, %P, %%; set and empty: no report; -p ignores it),
# `time`/`!` in any order and alone, `time -p --`; digits masked (only the layout is compared)
mask() { sed 's/[0-9]/N/g'; }
TIMEFORMAT='r=%R u=%1U s=%lS %2lR %% end'
{ time :; } 2>&1 | mask
TIMEFORMAT='%0R|%3R|%9lR'
{ time ! true; echo "st=$?"; } 2>&1 | mask
TIMEFORMAT=
{ time echo quiet; } 2>&1 | mask
{ time -p -- echo posix; } 2>&1 | mask
unset TIMEFORMAT
{ time time -p echo twice; } 2>&1 | mask
{ time; } 2>&1 | mask
!
echo "bang alone: $?"
! !
echo "bang twice: $?"
{ ! time true; echo "st=$?"; } 2>&1 | mask
f() { time; }
declare -f f
TIMEFORMAT='%Q'
{ time :; } 2>&1 | mask
