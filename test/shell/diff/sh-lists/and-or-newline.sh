true &&
echo after-and
false ||
echo after-or
