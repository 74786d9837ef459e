#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deps.sh — install the Debian packages box's build and tests need.
#
# Idempotent: packages already installed are not touched and apt is not even
# consulted when everything is present. As an ordinary user it prints the exact
# command to run as root and fails. Then the service's system users
# (packaging/sysusers.d/box.conf), which tests and `make demo` rely on, (as
# root) the ordinary test user boxtest the tests run boxes as, the pinned
# MCP TypeScript SDK of test/mcp/sdk/ (npm ci of its package-lock.json), and the
# coding-agent harnesses of test/harness/ (npm ci of theirs, once per machine), and the
# outside shell conformance suites of test/shell/suites/ (Debian's bash and busybox sources,
# apt-get source with a private deb-src list: fetch.sh there, once per machine).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
	build-essential pkg-config clang libclang-rt-14-dev clang-format
	libevent-dev libprotobuf-c-dev protobuf-c-compiler libseccomp-dev libcap-dev
	libinih-dev libjansson-dev android-libboringssl-dev libedit-dev
	bubblewrap python3 curl openssl iproute2 procps util-linux passwd
	git tmux python3-requests python3-httpx
	python3-venv python3-pip python3-setuptools python3-wheel python3-pytest
	dpkg-dev bzip2 xz-utils debian-archive-keyring
	lowdown man-db debhelper lintian
	nodejs npm
	nginx-light mitmproxy openssh-server openssh-client
)
# Packages whose maintainer scripts start a service: the host must not end up
# running an sshd or an nginx because the tests needed the binaries.
service_packages=(nginx-light openssh-server)

# A dpkg run that was cut short (a killed install, a machine stopped mid-configure) leaves
# packages half-configured, and apt-get then refuses every install until they are configured.
# Finish that first: it is what apt's own message asks for, and it only completes packages
# already unpacked.
if [ "$(id -u)" -eq 0 ] && [ -n "$(dpkg --audit 2>/dev/null)" ]; then
	echo "deps: finishing an interrupted dpkg run (dpkg --configure -a)"
	DEBIAN_FRONTEND=noninteractive dpkg --configure -a ||
		{ echo "deps: dpkg --configure -a failed; the package database needs a hand" >&2; exit 1; }
fi

missing=()
for p in "${packages[@]}"; do
	# node and npm may come from outside Debian on this machine: accept any.
	case "$p" in
	nodejs) command -v node >/dev/null 2>&1 && continue ;;
	npm) command -v npm >/dev/null 2>&1 && continue ;;
	# Any flavour of Debian's nginx (nginx, nginx-light, nginx-full) serves the tests.
	nginx-light) [ -x /usr/sbin/nginx ] && continue ;;
	esac
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$status" = "install ok installed" ] || missing+=("$p")
done

# The service's system users (packaging/sysusers.d/box.conf): box-policy,
# box-gateway and box-mcp run those daemons of a root boxd, box-daemon its
# client children and any daemon whose own user is absent (without it they run
# as nobody), and the members of box-clients may use the service socket. systemd-sysusers reads the
# same file a package installs; useradd/groupadd where it is absent.
ensure_users() {
	local u all=1
	for u in box-daemon box-policy box-gateway box-mcp; do
		id "$u" >/dev/null 2>&1 || all=
	done
	[ -n "$all" ] && getent group box-clients >/dev/null 2>&1 && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: the box-daemon user is missing (service daemons would run as nobody); as root run:" >&2
		echo "  systemd-sysusers $(pwd)/packaging/sysusers.d/box.conf" >&2
		return 0
	fi
	if command -v systemd-sysusers >/dev/null 2>&1; then
		systemd-sysusers "$PWD/packaging/sysusers.d/box.conf"
	else
		getent group box-clients >/dev/null 2>&1 || groupadd --system box-clients
		for u in box-daemon box-policy box-gateway box-mcp; do
			id "$u" >/dev/null 2>&1 ||
				useradd --system --no-create-home --home-dir / --shell /usr/sbin/nologin \
					--comment "box $u" "$u"
		done
	fi
	for u in box-daemon box-policy box-gateway box-mcp; do
		id "$u" >/dev/null 2>&1 || { echo "deps: could not create the $u user" >&2; exit 1; }
	done
	echo "deps: created the daemons' users (box-daemon, box-policy, box-gateway, box-mcp) and the box-clients group"
}

# The tests' ordinary user: boxes are run as boxtest as well as as root, from
# the first unit test on (test_recheck). Only as root; a home of its own.
ensure_test_user() {
	[ "$(id -u)" -eq 0 ] || return 0
	id boxtest >/dev/null 2>&1 && [ -d "$(getent passwd boxtest | cut -d: -f6)" ] && return 0
	id boxtest >/dev/null 2>&1 || useradd -m -s /bin/sh boxtest ||
		{ echo "deps: could not create the test user boxtest" >&2; exit 1; }
	home=$(getent passwd boxtest | cut -d: -f6)
	[ -d "$home" ] || install -d -o boxtest -g boxtest -m 0755 "$home"
	echo "deps: created the test user boxtest"
}

# The official MCP TypeScript SDK for test/mcp/sdk/ (t-mcp-sdk.sh): `npm ci` of the
# committed package-lock.json there, once. A stamp in node_modules holds the lock's hash, so
# a run with the same lock does nothing; a changed lock reinstalls (npm ci starts from an
# empty node_modules, so a failed install leaves no stamp). No package scripts run (nothing
# of the registry's runs as root); umask 022 so boxtest and a box's read grant can read it.
ensure_npm_dir() {
	local dir=$1 pkg=$2 what=$3 stamp want
	stamp=$dir/node_modules/.box-deps-stamp
	want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
	if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] &&
		[ -f "$dir/node_modules/$pkg/package.json" ]; then
		return 0
	fi
	if [ ! -w "$dir" ]; then
		echo "deps: $what of $dir is not installed; as root run:" >&2
		echo "  (cd $PWD/$dir && npm ci --ignore-scripts --no-audit --no-fund)" >&2
		exit 1
	fi
	echo "deps: installing $what in $dir (npm ci)"
	if ! (cd "$dir" && umask 022 && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error); then
		echo "deps: npm ci in $dir failed (is the npm registry reachable?)" >&2
		exit 1
	fi
	[ -f "$dir/node_modules/$pkg/package.json" ] ||
		{ echo "deps: npm ci in $dir did not install $pkg" >&2; exit 1; }
	echo "$want" >"$stamp"
}

ensure_mcp_sdk() {
	ensure_npm_dir test/mcp/sdk @modelcontextprotocol/sdk "the MCP TypeScript SDK"
}

# The OpenTelemetry JS SDK for test/otel/ (t-telemetry-otlp.sh): the same, by its lock.
ensure_otel_sdk() {
	ensure_npm_dir test/otel @opentelemetry/sdk-trace "the OpenTelemetry JS SDK"
}

# The coding-agent harnesses of test/harness/ (t-harness-*.sh): Claude Code, Codex and Gemini
# CLI from npm, pinned by test/harness/package-lock.json. Claude Code's and Codex's native
# binaries are some 400 MB each, so they are installed once per machine, outside any checkout,
# in the directory test/harness/where.sh names after the lock's hash (a changed lock installs
# beside the old one), 0755 so that boxtest and a box's grants read them. As in
# ensure_mcp_sdk: npm ci (an unreachable registry fails), no package scripts (nothing of the
# registry's runs as root: Claude Code's postinstall only copies the native binary its
# platform package already holds), a stamp with the lock's hash written last.
ensure_harnesses() {
	local dir stamp want
	dir=$(test/harness/where.sh)
	stamp=$dir/node_modules/.box-deps-stamp
	want=$(sha256sum test/harness/package-lock.json | cut -d' ' -f1)
	if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
		return 0
	fi
	if [ "$(id -u)" -ne 0 ] && ! mkdir -p "$dir" 2>/dev/null; then
		echo "deps: the harnesses of test/harness/ are not installed in $dir; as root run:" >&2
		echo "  make deps   (or BOX_TEST_HARNESS_ROOT=DIR make deps for a directory of yours)" >&2
		exit 1
	fi
	echo "deps: installing the coding-agent harnesses in $dir (npm ci; about 900 MB)"
	(umask 022 && mkdir -p "$dir" && rm -rf "$dir/node_modules" &&
		cp test/harness/package.json test/harness/package-lock.json "$dir/") ||
		{ echo "deps: cannot prepare $dir" >&2; exit 1; }
	if ! (cd "$dir" && umask 022 && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error); then
		echo "deps: npm ci in $dir failed (is the npm registry reachable?)" >&2
		exit 1
	fi
	for p in @anthropic-ai/claude-code @openai/codex @google/gemini-cli; do
		[ -f "$dir/node_modules/$p/package.json" ] ||
			{ echo "deps: npm ci in $dir did not install $p" >&2; exit 1; }
	done
	echo "$want" >"$stamp"
}

# The outside shell conformance suites of test/shell/suites/ (make check-conformance): their
# fetch.sh is idempotent (a stamp, no network once present) and fails loudly.
ensure_suites() {
	test/shell/suites/fetch.sh || exit 1
}

if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#packages[@]} packages present"
	ensure_users
	ensure_test_user
	ensure_mcp_sdk
	ensure_otel_sdk
	ensure_harnesses
	ensure_suites
	exit 0
fi

cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages; run as root:" >&2
	echo "  apt-get update && $cmd" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive

# policy-rc.d answering 101 tells invoke-rc.d not to start the services the
# packages install (the tests run their own sshd and nginx on loopback ports).
# One that is already there (a container's) is left alone; ours is removed
# once apt is done, whatever happens.
policy_rc=/usr/sbin/policy-rc.d
own_policy_rc=0
if [ ! -e "$policy_rc" ]; then
	printf '#!/bin/sh\n# box scripts/deps.sh: no service starts during this install.\nexit 101\n' >"$policy_rc"
	chmod 0755 "$policy_rc"
	own_policy_rc=1
	trap 'rm -f "$policy_rc"' EXIT
fi
# Another apt (unattended-upgrades, a second checkout's make deps) may hold the lock: wait.
apt_wait=(-o DPkg::Lock::Timeout=300)
apt-get "${apt_wait[@]}" update -qq
# shellcheck disable=SC2086
apt-get "${apt_wait[@]}" install -y --no-install-recommends ${missing[*]}
if [ "$own_policy_rc" -eq 1 ]; then rm -f "$policy_rc"; fi

# Where systemd runs, the units are enabled by the packages' postinst: stop
# and disable those we just installed so nothing listens on the host.
if [ -d /run/systemd/system ]; then
	for p in "${service_packages[@]}"; do
		case " ${missing[*]} " in *" $p "*) ;; *) continue ;; esac
		case "$p" in
		openssh-server) systemctl disable --now ssh.service ssh.socket >/dev/null 2>&1 || true ;;
		nginx-light) systemctl disable --now nginx.service >/dev/null 2>&1 || true ;;
		esac
	done
fi
ensure_users
ensure_test_user
ensure_mcp_sdk
ensure_otel_sdk
ensure_harnesses
ensure_suites
