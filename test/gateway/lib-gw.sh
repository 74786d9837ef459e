# SPDX-License-Identifier: Apache-2.0
# lib-gw.sh — run box-gateway under test/gateway/gw-harness from a shell test.
# Source it after test/lib.sh; it sources test/servers/lib-servers.sh (whose $SRV_DIR holds
# everything and is removed at exit).
#
#   gw_start INIT.json POLICY.dw [HARNESS ARGS...]   (default: --listen agent)
#        starts the harness with a control fifo on stdin, waits for its ready file;
#        sets GW_PORT (the first listener's port), GW_CA, GW_PID (the gateway),
#        GW_HPID (the harness), GW_DEC (decisions JSON lines), GW_ERR (stderr of both)
#   gw_port SANDBOX      the port of that sandbox's listener
#   gw_cmd LINE          a command on the harness's stdin ("close agent", "drop-policyd")
#   gw_stop              EOF on stdin (boxd leaves); sets GW_STATUS to the harness's status
#   gw_bg CMD...         CMD in the background without the control fifo's write end (a
#                        server started after gw_start would otherwise keep the harness's
#                        stdin open and gw_stop would wait forever); sets GW_BG_PID
#   gw_curl ARGS...      curl through the gateway trusting its CA (-sS, 10 s cap)
#   gw_hosts NAME...     writes $SRV_DIR/hosts mapping each NAME to 127.0.0.1
#   gw_servers [EXTRA]   the loopback servers most tests use: the test CA (api.box.test,
#                        *.box.test, localhost), httpd.py over TLS (TP, TLOG) and plain (PP,
#                        PLOG), a resolver that answers nothing (no query leaves loopback),
#                        hosts for api/other/plain.box.test, and $SRV_DIR/init.json naming
#                        them with allow_host_loopback (EXTRA: more JSON keys); a failure
#                        ends the test (not ok)
#   gw_dec_count JQ_FILTER   number of decision lines matching a python expression on `d`
#   gw_owed              the number of permits no Record named yet (the harness's "owed"),
#                        once it is 0 or after 5 s (a Record may still be on its way)
# Trusts: nothing; it is test code.

. "$(dirname "${BASH_SOURCE[0]}")/../servers/lib-servers.sh"
GW_HARNESS=${GW_HARNESS:-$BOX_BUILD/test/gateway/gw-harness}
GW_BIN=${GW_BIN:-$BOX_BIN/box-gateway}
_gw_seq=0
_gw_ctl_fd=

gw_cleanup() {
	if [ -n "${GW_HPID:-}" ] && kill -0 "$GW_HPID" 2>/dev/null; then
		[ -n "$_gw_ctl_fd" ] && eval "exec $_gw_ctl_fd>&-"
		_gw_ctl_fd=
		for _ in $(seq 40); do kill -0 "$GW_HPID" 2>/dev/null || break; sleep 0.05; done
		kill "$GW_HPID" "${GW_PID:-}" 2>/dev/null
	fi
	stop_all
}
trap gw_cleanup EXIT

gw_start() {
	local init=$1 policy=$2
	shift 2
	[ $# -gt 0 ] || set -- --listen agent
	_gw_seq=$((_gw_seq + 1))
	local d=$SRV_DIR/gw.$_gw_seq
	mkdir -p "$d"
	mkfifo "$d/ctl"
	GW_DEC=$d/decisions.jsonl GW_ERR=$d/err GW_READY=$d/ready
	: >"$GW_DEC"
	"$GW_HARNESS" --gateway "$GW_BIN" --policy "$policy" --init "$init" \
		--ready-file "$GW_READY" --decisions "$GW_DEC" "$@" <"$d/ctl" >>"$GW_ERR" 2>&1 &
	GW_HPID=$!
	exec {_gw_ctl_fd}>"$d/ctl"
	for _ in $(seq 200); do
		[ -s "$GW_READY" ] && break
		kill -0 "$GW_HPID" 2>/dev/null || break
		sleep 0.05
	done
	if [ ! -s "$GW_READY" ]; then
		wait "$GW_HPID"
		GW_STATUS=$?
		sed 's/^/# /' "$GW_ERR" >&2
		return 1
	fi
	GW_PID=$(awk '$1 == "pid" { print $2 }' "$GW_READY")
	GW_CA=$(awk '$1 == "ca" { print $2 }' "$GW_READY")
	GW_PORT=$(awk '$1 == "listener" { print $3; exit }' "$GW_READY")
}

gw_port() { awk -v s="$1" '$1 == "listener" && $2 == s { print $3 }' "$GW_READY"; }

gw_cmd() { echo "$1" >&"$_gw_ctl_fd"; }

gw_stop() {
	eval "exec $_gw_ctl_fd>&-"
	_gw_ctl_fd=
	wait "$GW_HPID"
	GW_STATUS=$?
}

gw_bg() {
	if [ -n "$_gw_ctl_fd" ]; then
		eval '"$@" '"$_gw_ctl_fd"'>&- &'
	else
		"$@" &
	fi
	GW_BG_PID=$!
	_srv_pids+=("$GW_BG_PID")
}

gw_curl() {
	curl -sS --max-time 10 --proxy "http://127.0.0.1:$GW_PORT" --cacert "$GW_CA" "$@"
}

gw_hosts() {
	: >"$SRV_DIR/hosts"
	local n
	for n in "$@"; do echo "127.0.0.1 $n" >>"$SRV_DIR/hosts"; done
}

gw_servers() {
	make_ca api.box.test '*.box.test' localhost >/dev/null || { not_ok "test CA"; tap_done; exit; }
	start_httpd --tls || { not_ok "httpd --tls"; tap_done; exit; }
	TP=$HTTPD_PORT TLOG=$HTTPD_LOG
	start_httpd || { not_ok "httpd"; tap_done; exit; }
	PP=$HTTPD_PORT PLOG=$HTTPD_LOG
	echo '{}' >"$SRV_DIR/zone.json"
	start_dnsd "$SRV_DIR/zone.json" || { not_ok "dnsd"; tap_done; exit; }
	gw_hosts api.box.test other.box.test plain.box.test
	cat >"$SRV_DIR/init.json" <<EOF
{"upstream_ca_pem_file": "$SRV_CA", "hosts_file_path": "$SRV_DIR/hosts",
 "resolver": "127.0.0.1:$DNSD_PORT", "allow_host_loopback": true${1:+, $1}}
EOF
}

# gw_dec_count 'EXPR': decision/record lines d (a dict) for which the python EXPR is true.
gw_owed() {
	local n k
	for k in $(seq 50); do
		gw_cmd owed
		for _ in $(seq 40); do
			n=$(grep -c '"kind": *"owed"' "$GW_DEC")
			[ "$n" -ge "$k" ] && break
			sleep 0.05
		done
		n=$(grep '"kind": *"owed"' "$GW_DEC" | tail -1 | sed 's/.*"count": *\([0-9]*\).*/\1/')
		[ "$n" = 0 ] && break
		sleep 0.1
	done
	echo "${n:-none}"
}

gw_dec_count() {
	python3 - "$GW_DEC" "$1" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    i = d.get("input", {})
    if eval(sys.argv[2]):
        n += 1
print(n)
PY
}
