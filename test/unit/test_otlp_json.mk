# SPDX-License-Identifier: Apache-2.0
# test_otlp_json: proto/otlp_json.c and proto/otlp_tag.c (in libboxproto).
UNIT_CPPFLAGS_otlp_json := -Iproto
UNIT_LIBS_otlp_json := -lm
