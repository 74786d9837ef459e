#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sshd.sh DIR PORT [--user NAME] — run a private OpenSSH server on 127.0.0.1:PORT for the
# gateway's passthrough tests (`ssh -o ProxyCommand=...` through the gateway).
#
# Prepares DIR (created if absent) and then execs `/usr/sbin/sshd -D -e -f DIR/sshd_config`
# in the foreground (the caller backgrounds it and kills it; sshd's own pid is in DIR/pid):
#   DIR/ssh_host_ed25519_key   its own host key (never the host's /etc/ssh keys)
#   DIR/id_ed25519[.pub]       the client key; DIR/authorized_keys holds its public half
#   DIR/known_hosts            the host key under the alias box-test-sshd and [127.0.0.1]:PORT
#   DIR/ssh_config             a client config: that key, that known_hosts, HostKeyAlias
#                              box-test-sshd, BatchMode, StrictHostKeyChecking yes
# so that `ssh -F DIR/ssh_config -p PORT root@127.0.0.1 echo ok` prints ok. Logins: root
# (the invoking user) and, with --user NAME, NAME too; the client key is then owned by NAME
# (root can still use it). Public-key only, UsePAM no, StrictModes no, LogLevel ERROR: prints
# nothing but errors. Root only (sshd needs it). A locked NAME ('!' password field, which
# sshd without PAM refuses) is given the no-password-login field '*'.
# Trusts: nothing; it is test code.
set -euo pipefail

usage() {
	echo "usage: sshd.sh DIR PORT [--user NAME]" >&2
	exit 2
}
[ $# -ge 2 ] || usage
dir=$1
port=$2
shift 2
user=""
while [ $# -gt 0 ]; do
	case "$1" in
	--user) [ $# -ge 2 ] || usage; user=$2; shift 2 ;;
	*) usage ;;
	esac
done
case "$port" in '' | *[!0-9]*) echo "sshd.sh: bad port '$port'" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "sshd.sh: needs root" >&2; exit 1; }
[ -x /usr/sbin/sshd ] || { echo "sshd.sh: /usr/sbin/sshd is missing (make deps installs openssh-server)" >&2; exit 1; }
if [ -n "$user" ]; then
	id "$user" >/dev/null 2>&1 || { echo "sshd.sh: no user '$user'" >&2; exit 1; }
	if [ "$(getent shadow "$user" | cut -d: -f2 | cut -c1)" = "!" ]; then
		usermod -p '*' "$user"
	fi
fi

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
chmod 0755 "$dir"
# The privilege separation directory sshd insists on.
mkdir -p /run/sshd
chmod 0755 /run/sshd

[ -f "$dir/ssh_host_ed25519_key" ] ||
	ssh-keygen -q -t ed25519 -N '' -C box-test-sshd -f "$dir/ssh_host_ed25519_key"
[ -f "$dir/id_ed25519" ] ||
	ssh-keygen -q -t ed25519 -N '' -C box-test-client -f "$dir/id_ed25519"
install -m 0644 "$dir/id_ed25519.pub" "$dir/authorized_keys"
hostkey=$(cut -d' ' -f1,2 "$dir/ssh_host_ed25519_key.pub")
printf 'box-test-sshd %s\n[127.0.0.1]:%s %s\n' "$hostkey" "$port" "$hostkey" >"$dir/known_hosts"
chmod 0644 "$dir/known_hosts"
if [ -n "$user" ]; then
	chown "$user" "$dir/id_ed25519"
fi

cat >"$dir/ssh_config" <<EOF
Host *
	IdentityFile $dir/id_ed25519
	IdentitiesOnly yes
	UserKnownHostsFile $dir/known_hosts
	GlobalKnownHostsFile /dev/null
	HostKeyAlias box-test-sshd
	StrictHostKeyChecking yes
	BatchMode yes
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	ConnectTimeout 10
	LogLevel ERROR
EOF
chmod 0644 "$dir/ssh_config"

cat >"$dir/sshd_config" <<EOF
# Written by test/servers/sshd.sh: a private sshd for one test, on loopback only.
ListenAddress 127.0.0.1:$port
HostKey $dir/ssh_host_ed25519_key
PidFile $dir/pid
AuthorizedKeysFile $dir/authorized_keys
AllowUsers root${user:+ $user}
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
X11Forwarding no
AllowTcpForwarding no
AllowAgentForwarding no
PermitTunnel no
UseDNS no
MaxStartups 64
LogLevel ERROR
EOF
/usr/sbin/sshd -t -f "$dir/sshd_config"
exec /usr/sbin/sshd -D -e -f "$dir/sshd_config"
