# id is box-sh's own command (a login shell's /etc/profile asks id -u): as GNU id.
id
id -u; id -un; id -g; id -gn; id -G; id -Gn
id root; id -u nobody; id -gn nobody
id -zu | od -c | head -1
id nosuchuser; echo "rc $?"
id -n; echo "rc $?"
id -ug; echo "rc $?"
id -x; echo "rc $?"
