# SPDX-License-Identifier: Apache-2.0
# test/shell/ — box-shell's tests, one directory per area (each with its own
# module.mk; the top-level Makefile includes only test/*/module.mk).
include $(sort $(wildcard test/shell/*/module.mk))
