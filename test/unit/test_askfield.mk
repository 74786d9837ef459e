# SPDX-License-Identifier: Apache-2.0
# test_askfield: boxd/askfield.c (a held request's fields as text for a person) alone.
UNIT_DEPS_askfield := $(BUILD)/boxd/askfield.o
UNIT_CPPFLAGS_askfield := -Iproto
