# SPDX-License-Identifier: Apache-2.0
# box — top-level, non-recursive Makefile.
#
# Every directory contributes a module.mk (a shared library of a program's
# directory: lib.mk, included with them) that adds its objects, programs and
# tests to the variables below; nothing recurses. Outputs go to $(BUILD)
# (build/, or build/san for SAN=...). Programs land in $(BUILD)/bin so that
# boxctl and boxd find their helpers next to their own executable.
#
#   make deps      install the Debian packages, users and npm packages the build and tests
#                  need (root)
#   make / all     build everything
#   make check     build, then run every test; ends with "N passed, N failed"
#   make check-build  build what make check runs, without running it
#   make check-slow  the tests that take over 30 s alone (SLOW_SCRIPTS), kept out of make check
#   make check-COMPONENT  only one program's or library's tests (check-boxd, check-box-shell,
#                  check-libboxpolicy, ...: test/components.mk; HACKING.md lists them)
#   make demo      run the demo box
#   make bench     run the benchmarks (ratios against peers)
#   make fuzz      build libFuzzer targets with clang (FUZZ=1) and run them briefly
#   make install   install under $(DESTDIR)$(PREFIX) (packaging/install.mk)
#   make deb       the Debian package, in $(BUILD)/deb/ (packaging/deb.mk)
#   make format    clang-format the tree

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SUFFIXES:

include config.mk

BIN := $(BUILD)/bin

# The front door, the licence and docs/ go to DOCDIR (boxd.service's Documentation= names it).
INSTALL_DOCS    := README.md LICENSE $(sort $(wildcard docs/*.md))

# Internal static libraries, named here so any module may link them whatever
# the include order.
LIBCOMMON    := $(BUILD)/common/libboxcommon.a
LIBPROTO     := $(BUILD)/proto/libboxproto.a
LIBBOXPOLICY := $(BUILD)/libboxpolicy/libboxpolicy.a
LIBPOLICYCLIENT := $(BUILD)/libpolicyclient/libpolicyclient.a
# The shell interpreter and its own commands (libshell/, libshell/cmd/), and the flags
# that find its headers: box-sh/ and box-shell/ (included before it) link it.
LIBSHELL     := $(BUILD)/libshell/libshell.a
LIBSHELL_INCLUDES := -Ilibshell -Ilibshell/cmd

# Filled in by module.mk files. CHECK_DEPS: helpers the test scripts need built.
PROGRAMS        :=
LIBEXEC_PROGRAMS :=
CHECK_PROGRAMS  :=
CHECK_DEPS      :=
CHECK_SCRIPTS   :=
# Tests over 30 s alone: `make check-slow` runs them, `make check` does not (HACKING.md).
SLOW_SCRIPTS    :=
BENCH_SCRIPTS   :=
ALL_OBJS        :=
PROTO_FILES     :=

# Compile and link recipes shared by every module.
define compile_c
	@mkdir -p $(@D)
	$(CC) $(BOX_CPPFLAGS) $(MODULE_CPPFLAGS) $(BOX_CFLAGS) $(MODULE_CFLAGS) -c $< -o $@
endef
# Libraries in dependency order, each once: libpolicyclient, libboxpolicy, libboxproto, then
# libboxcommon (a leaf). No link group: a cycle between them is a build error.
define link_program
	@mkdir -p $(@D)
	$(CC) $(BOX_CFLAGS) $(BOX_LDFLAGS) -o $@ $(filter %.o,$^) $(filter %.a,$^) $(MODULE_LDLIBS)
endef
define archive
	@mkdir -p $(@D)
	rm -f $@
	ar rcs $@ $^
endef

# proto and common first: their generated headers are order-only
# prerequisites of every object.
include proto/module.mk
include common/module.mk
include $(sort $(filter-out proto/module.mk common/module.mk,$(wildcard */module.mk) $(wildcard */lib.mk) $(wildcard test/*/module.mk) $(wildcard bench/module.mk)))

# Which tests belong to which component (make check-COMPONENT); after every module.mk.
include test/components.mk
# make install, the units, the man pages (after every module.mk: it reads PROGRAMS).
include packaging/install.mk
# make deb, the Debian package (packaging/deb/).
include packaging/deb.mk

$(BUILD)/%.o: %.c | $(PROTO_GEN_H) $(COMMON_GEN_H)
	$(compile_c)

all: $(PROGRAMS) $(LIBEXEC_PROGRAMS)

# check and demo install what they need first, then build in parallel.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check:
	@scripts/deps.sh
	@$(MAKE) --no-print-directory -j$(JOBS) all $(CHECK_PROGRAMS) $(CHECK_DEPS)
	@$(MAKE) --no-print-directory check-run

# Everything make check runs, built without running it (to run a single test).
check-build: all $(CHECK_PROGRAMS) $(CHECK_DEPS)

check-run:
	@BOX_BUILD=$(BUILD) BOX_BIN=$(BIN) SAN=$(SAN) BOX_TEST_SLOW_OVER=30 test/run-tests.sh $(CHECK_PROGRAMS) $(CHECK_SCRIPTS)

check-slow:
	@scripts/deps.sh
	@$(MAKE) --no-print-directory -j$(JOBS) all $(CHECK_DEPS)
	@BOX_BUILD=$(BUILD) BOX_BIN=$(BIN) SAN=$(SAN) test/run-tests.sh $(SLOW_SCRIPTS)

bench: all
	@set -e; for b in $(BENCH_SCRIPTS); do BOX_BUILD=$(BUILD) BOX_BIN=$(BIN) $$b; done

demo:
	@scripts/deps.sh
	@$(MAKE) --no-print-directory -j$(JOBS) all
	@BOX_BIN=$(BIN) examples/demo.sh

deps:
	@scripts/deps.sh

clean:
	rm -rf build

format:
	clang-format -i $(shell git ls-files '*.c' '*.h')

help:
	@sed -n '2,/^$$/p' Makefile | sed 's/^# \{0,1\}//'

.PHONY: all check check-build check-run check-slow bench demo deps install clean format help fuzz

-include $(ALL_OBJS:.o=.d)
