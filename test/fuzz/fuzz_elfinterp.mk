# SPDX-License-Identifier: Apache-2.0
# fuzz_elfinterp — the PT_INTERP reader box-recheck runs on the agent's programs.
FUZZ_DEPS_elfinterp :=
FUZZ_LIBS_elfinterp :=
