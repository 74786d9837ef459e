# SPDX-License-Identifier: Apache-2.0
UNIT_LIBS_privdrop := $(call pkg_libs,libcap)
