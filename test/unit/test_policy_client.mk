# SPDX-License-Identifier: Apache-2.0
# test_policy_client — libpolicyclient (box-policyd's peers' client) against a socketpair peer.
UNIT_DEPS_policy_client := $(LIBPOLICYCLIENT)
UNIT_LIBS_policy_client :=
