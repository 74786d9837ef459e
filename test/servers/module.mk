# SPDX-License-Identifier: Apache-2.0
# test/servers/ — the loopback servers the gateway tests and bench/gateway run (HTTP(S), DNS,
# TCP echo, sshd, test CA); t-servers.sh proves each one answers.
CHECK_SCRIPTS += test/servers/t-servers.sh
