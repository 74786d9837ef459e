# SPDX-License-Identifier: Apache-2.0
# test_ipc — common/ipc.c + proto/validate.c (the default libboxproto + libboxcommon link).
UNIT_DEPS_ipc :=
UNIT_LIBS_ipc :=
