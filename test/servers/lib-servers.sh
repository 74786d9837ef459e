# SPDX-License-Identifier: Apache-2.0
# lib-servers.sh — start the loopback test servers of test/servers/ from a shell test.
# Source it (bash); every server it starts listens on 127.0.0.1 on an ephemeral port and is
# killed at exit (an EXIT trap calls stop_all; a test with its own EXIT trap calls stop_all
# from it). All state lives in $SRV_DIR (a fresh temp dir, removed by stop_all).
#
#   make_ca NAME...                  test CA + leaf (mkca.sh) in $SRV_DIR/ca: sets SRV_CA
#                                    (ca.pem), SRV_CERT (server.pem), SRV_KEY (server.key);
#                                    default names: api.box.test '*.box.test' localhost
#   start_httpd [--tls] [ARGS...]    httpd.py (--tls uses the make_ca leaf, made if needed);
#                                    sets HTTPD_PORT, HTTPD_LOG (JSON lines), HTTPD_PID.
#                                    ARGS go to httpd.py (e.g. --log-connections)
#   start_dnsd ZONE.json [ARGS...]   dnsd.py: sets DNSD_PORT, DNSD_LOG, DNSD_PID
#   start_echod [ARGS...]            echod.py: sets ECHOD_PORT, ECHOD_LOG, ECHOD_PID
#   start_sshd [--user NAME]         sshd.sh on a free port: sets SSHD_PORT, SSHD_DIR (with
#                                    ssh_config, id_ed25519, known_hosts), SSHD_PID; returns 1
#                                    (nothing started) when openssh-server is not installed
#   wait_port_file FILE [PID]        up to 10 s for FILE to hold a port; fails early if PID died
#   free_port                        prints a loopback TCP port that was free a moment ago
#   stop_all                         kills every server started here and removes $SRV_DIR
# Several servers of a kind: each start_* call overwrites the variables, so copy them first.
# Trusts: nothing; it is test code.

SRV_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRV_DIR=$(mktemp -d /tmp/box-gwtest-srv.XXXXXX)
chmod 0755 "$SRV_DIR"
_srv_pids=()
_srv_seq=0

stop_all() {
	local p
	for p in "${_srv_pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${_srv_pids[@]}"; do
		for _ in $(seq 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
		kill -9 "$p" 2>/dev/null
		# Reap our own children quietly (no "Killed" notice); others return at once.
		wait "$p" 2>/dev/null
	done
	_srv_pids=()
	[ -n "${SRV_DIR:-}" ] && rm -rf "$SRV_DIR"
	return 0
}
trap stop_all EXIT

wait_port_file() {
	local f=$1 pid=${2:-}
	for _ in $(seq 200); do
		if [ -s "$f" ] && grep -qE '^[0-9]+$' "$f"; then return 0; fi
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			echo "# server $pid exited before writing $f" >&2
			return 1
		fi
		sleep 0.05
	done
	echo "# no port in $f after 10 s" >&2
	return 1
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

make_ca() {
	[ $# -gt 0 ] || set -- api.box.test '*.box.test' localhost
	"$SRV_LIB_DIR/mkca.sh" "$SRV_DIR/ca" "$@" || return 1
	SRV_CA=$SRV_DIR/ca/ca.pem SRV_CERT=$SRV_DIR/ca/server.pem SRV_KEY=$SRV_DIR/ca/server.key
}

# _srv_start KIND CMD...: runs CMD in the background with --port-file and --log in $SRV_DIR;
# sets _srv_port, _srv_log, _srv_pid.
_srv_start() {
	local kind=$1
	shift
	_srv_seq=$((_srv_seq + 1))
	local base="$SRV_DIR/$kind.$_srv_seq"
	_srv_log=$base.log
	: >"$_srv_log"
	"$@" --port-file "$base.port" --log "$_srv_log" 2>>"$base.err" &
	_srv_pid=$!
	_srv_pids+=("$_srv_pid")
	if ! wait_port_file "$base.port" "$_srv_pid"; then
		sed 's/^/# /' "$base.err" >&2
		return 1
	fi
	_srv_port=$(cat "$base.port")
}

start_httpd() {
	local tls=()
	if [ "${1:-}" = "--tls" ]; then
		shift
		[ -n "${SRV_CERT:-}" ] || make_ca || return 1
		tls=(--tls "$SRV_CERT" "$SRV_KEY")
	fi
	_srv_start httpd python3 "$SRV_LIB_DIR/httpd.py" "${tls[@]}" "$@" || return 1
	HTTPD_PORT=$_srv_port HTTPD_LOG=$_srv_log HTTPD_PID=$_srv_pid
}

start_dnsd() {
	local zone=$1
	shift
	_srv_start dnsd python3 "$SRV_LIB_DIR/dnsd.py" --zone "$zone" "$@" || return 1
	DNSD_PORT=$_srv_port DNSD_LOG=$_srv_log DNSD_PID=$_srv_pid
}

start_echod() {
	_srv_start echod python3 "$SRV_LIB_DIR/echod.py" "$@" || return 1
	ECHOD_PORT=$_srv_port ECHOD_LOG=$_srv_log ECHOD_PID=$_srv_pid
}

start_sshd() {
	[ -x /usr/sbin/sshd ] || return 1
	local try port
	_srv_seq=$((_srv_seq + 1))
	SSHD_DIR="$SRV_DIR/sshd.$_srv_seq"
	mkdir -p "$SSHD_DIR"
	for try in 1 2 3 4 5; do
		port=$(free_port)
		"$SRV_LIB_DIR/sshd.sh" "$SSHD_DIR" "$port" "$@" 2>>"$SSHD_DIR/err" &
		SSHD_PID=$!
		for _ in $(seq 100); do
			# Listening once the port accepts; a bind failure ends the process.
			kill -0 "$SSHD_PID" 2>/dev/null || break
			if python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$port" 2>/dev/null; then
				_srv_pids+=("$SSHD_PID")
				SSHD_PORT=$port
				return 0
			fi
			sleep 0.05
		done
		kill "$SSHD_PID" 2>/dev/null
		wait "$SSHD_PID" 2>/dev/null
	done
	sed 's/^/# /' "$SSHD_DIR/err" >&2
	return 1
}
