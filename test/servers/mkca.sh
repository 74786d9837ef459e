#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# mkca.sh OUTDIR NAME... — make a throwaway test CA and one server certificate with
# the openssl CLI, for the loopback test servers (httpd.py --tls, nginx, sshd-less tests).
#
# Writes OUTDIR/ca.pem, ca.key (the CA), server.pem, server.key (the leaf, signed
# by the CA) and chain.pem (server.pem then ca.pem). The leaf's subjectAltName is
# every NAME as a DNS name (wildcards such as '*.box.test' allowed) plus
# IP:127.0.0.1 and IP:::1. EC P-256 keys, valid for 30 days, keys mode 0600.
# Trusts: nothing; test code. OUTDIR is created if absent.
set -euo pipefail

if [ $# -lt 2 ]; then
	echo "usage: mkca.sh OUTDIR NAME..." >&2
	exit 2
fi
out=$1
shift
mkdir -p "$out"

san=""
for n in "$@"; do
	case "$n" in
	*[!A-Za-z0-9.*-]* | "") echo "mkca.sh: bad DNS name '$n'" >&2; exit 2 ;;
	esac
	san="${san:+$san,}DNS:$n"
done
san="$san,IP:127.0.0.1,IP:::1"

umask 077
openssl ecparam -name prime256v1 -genkey -noout -out "$out/ca.key" 2>/dev/null
openssl req -x509 -new -key "$out/ca.key" -sha256 -days 30 -subj "/CN=box test CA" \
	-addext "basicConstraints=critical,CA:TRUE" \
	-addext "keyUsage=critical,keyCertSign,cRLSign" \
	-addext "subjectKeyIdentifier=hash" \
	-out "$out/ca.pem" 2>/dev/null

openssl ecparam -name prime256v1 -genkey -noout -out "$out/server.key" 2>/dev/null
openssl req -new -key "$out/server.key" -subj "/CN=$1" -out "$out/server.csr" 2>/dev/null
cat >"$out/server.ext" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=$san
authorityKeyIdentifier=keyid
EXT
openssl x509 -req -in "$out/server.csr" -CA "$out/ca.pem" -CAkey "$out/ca.key" \
	-CAcreateserial -days 30 -sha256 -extfile "$out/server.ext" -out "$out/server.pem" 2>/dev/null
rm -f "$out/server.csr" "$out/server.ext" "$out/ca.srl"
cat "$out/server.pem" "$out/ca.pem" >"$out/chain.pem"
chmod 0644 "$out/ca.pem" "$out/server.pem" "$out/chain.pem"
