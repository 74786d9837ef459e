# SPDX-License-Identifier: Apache-2.0
# test_policy_proto — proto/policy.proto and proto/policy_validate.c through
# box_ipc_decode with the policy protocol's table.
UNIT_DEPS_policy_proto :=
UNIT_LIBS_policy_proto :=
