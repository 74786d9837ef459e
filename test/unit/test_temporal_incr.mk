# SPDX-License-Identifier: Apache-2.0
# test_temporal_incr — the temporal monitor's incremental aggregates agree with the scan.
UNIT_DEPS_temporal_incr := $(LIBBOXPOLICY)
UNIT_LIBS_temporal_incr :=
