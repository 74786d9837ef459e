#!/usr/bin/env bash
# deps.sh — install the Debian packages box's build and tests need.
#
# Idempotent: packages already installed are not touched and apt is not even
# consulted when everything is present. As an ordinary user it prints the exact
# command to run as root and fails.
set -euo pipefail

packages=(
	build-essential pkg-config clang libclang-rt-14-dev clang-format
	libevent-dev libprotobuf-c-dev protobuf-c-compiler libseccomp-dev libcap-dev
	libinih-dev libjansson-dev android-libboringssl-dev
	bubblewrap python3 curl openssl iproute2 procps util-linux passwd
	nodejs npm
)

missing=()
for p in "${packages[@]}"; do
	# node and npm may come from outside Debian on this machine: accept any.
	case "$p" in
	nodejs) command -v node >/dev/null 2>&1 && continue ;;
	npm) command -v npm >/dev/null 2>&1 && continue ;;
	esac
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$status" = "install ok installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#packages[@]} packages present"
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
apt-get update -qq
# shellcheck disable=SC2086
$cmd
