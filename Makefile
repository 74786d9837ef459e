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
#   make install   install under $(DESTDIR)$(PREFIX)
#   make format    clang-format the tree

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SUFFIXES:

include config.mk

BIN := $(BUILD)/bin

# systemd units `make install` places beside the programs (packaging/).
PACKAGING_UNITS := packaging/systemd/boxd.service packaging/systemd/boxd.socket
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
	@BOX_BUILD=$(BUILD) BOX_BIN=$(BIN) SAN=$(SAN) test/run-tests.sh $(CHECK_PROGRAMS) $(CHECK_SCRIPTS)

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

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBEXECDIR)
	install -m 0755 $(BIN)/boxctl $(DESTDIR)$(BINDIR)/boxctl
	$(foreach p,$(filter-out $(BIN)/boxctl,$(PROGRAMS)),install -m 0755 $(p) $(DESTDIR)$(SBINDIR)/$(notdir $(p));)
	$(foreach p,$(LIBEXEC_PROGRAMS),install -m 0755 $(p) $(DESTDIR)$(LIBEXECDIR)/$(notdir $(p));)
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR)
	install -m 0644 $(PACKAGING_UNITS) $(DESTDIR)$(UNITDIR)/
	install -m 0644 packaging/sysusers.d/box.conf $(DESTDIR)$(SYSUSERSDIR)/box.conf
	install -m 0644 packaging/tmpfiles.d/box.conf $(DESTDIR)$(TMPFILESDIR)/box.conf
	install -d $(DESTDIR)$(DOCDIR) $(DESTDIR)$(COMPLETIONDIR)
	install -m 0644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/
	install -m 0644 packaging/completion/boxctl $(DESTDIR)$(COMPLETIONDIR)/boxctl
	@# Never setuid: the trampoline gets its rights from boxd, not from its mode.
	@! find $(DESTDIR)$(BINDIR)/boxctl $(foreach p,$(filter-out $(BIN)/boxctl,$(PROGRAMS)),$(DESTDIR)$(SBINDIR)/$(notdir $(p))) \
		$(foreach p,$(LIBEXEC_PROGRAMS),$(DESTDIR)$(LIBEXECDIR)/$(notdir $(p))) -perm /6000 | grep .

# The programs `install` places, one per line as DIR/NAME (for t-install.sh).
print-install-list:
	@echo bin/boxctl
	@$(foreach p,$(filter-out $(BIN)/boxctl,$(PROGRAMS)),echo sbin/$(notdir $(p));)
	@$(foreach p,$(LIBEXEC_PROGRAMS),echo libexec/box/$(notdir $(p));)

# The data files `install` places (mode 0644), as absolute paths without DESTDIR.
print-install-data:
	@$(foreach u,$(PACKAGING_UNITS),echo $(UNITDIR)/$(notdir $(u));)
	@echo $(SYSUSERSDIR)/box.conf
	@echo $(TMPFILESDIR)/box.conf
	@echo $(COMPLETIONDIR)/boxctl
	@$(foreach d,$(INSTALL_DOCS),echo $(DOCDIR)/$(notdir $(d));)

clean:
	rm -rf build

format:
	clang-format -i $(shell git ls-files '*.c' '*.h')

help:
	@sed -n '2,/^$$/p' Makefile | sed 's/^# \{0,1\}//'

.PHONY: print-install-list print-install-data all check check-build check-run check-slow bench demo deps install clean format help fuzz

-include $(ALL_OBJS:.o=.d)
