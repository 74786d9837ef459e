# SPDX-License-Identifier: Apache-2.0
# config.mk — toolchain, flags, install directories and library probes.
#
# Included once by the top-level Makefile. Every external library is found
# through pkg-config, except BoringSSL (Debian's android-libboringssl-dev ships
# no .pc file), whose fixed Debian locations are spelled out below.

PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
SBINDIR     ?= $(PREFIX)/sbin
LIBEXECDIR  ?= $(PREFIX)/libexec/box
DATADIR     ?= $(PREFIX)/share
DOCDIR      ?= $(DATADIR)/doc/box
COMPLETIONDIR ?= $(DATADIR)/bash-completion/completions
UNITDIR     ?= /lib/systemd/system
SYSUSERSDIR ?= /usr/lib/sysusers.d
TMPFILESDIR ?= /usr/lib/tmpfiles.d
DESTDIR     ?=

CC          ?= cc
PKG_CONFIG  ?= pkg-config
PROTOC_C    ?= protoc-c

# The sanitizer variant builds into its own tree so both can coexist.
ifneq ($(SAN),)
BUILD       ?= build/san
else
BUILD       ?= build
endif
# One spelling of the build tree: BUILD=$PWD/build (test/integration/t-install.sh runs
# `make install` with the tests' absolute BOX_BUILD) must name the same targets as BUILD=build,
# or the dependency files written by one run (-MMD: "/abs/build/x.o: x.c sh.h …") attach the
# headers to targets the other run never asks for, and a changed header rebuilds nothing.
override BUILD := $(patsubst $(CURDIR)/%,%,$(BUILD))

# Libraries every build needs (the names are pkg-config modules).
PKG_MODULES := libevent libprotobuf-c libseccomp libcap inih jansson

MULTIARCH   := $(shell $(CC) -print-multiarch 2>/dev/null)
BORINGSSL_CFLAGS := -isystem /usr/include/android
BORINGSSL_LIBDIR := /usr/lib/$(MULTIARCH)/android
# Debian ships only the versioned sonames: link them by file name.
BORINGSSL_LIBS   := $(BORINGSSL_LIBDIR)/libssl.so.0 $(BORINGSSL_LIBDIR)/libcrypto.so.0 \
                    -Wl,-rpath,$(BORINGSSL_LIBDIR)
# libcrypto alone (SHA-256 of the decision log chain, common/logchain.c): boxd, boxctl, box-policyd.
BORINGSSL_CRYPTO_LIBS := $(BORINGSSL_LIBDIR)/libcrypto.so.0 -Wl,-rpath,$(BORINGSSL_LIBDIR)

BOX_VERSION := 0.1.0

WARNINGS := -Wall -Wextra -Werror -Wno-unused-parameter \
	-Werror=implicit-function-declaration -Werror=strict-prototypes \
	-Werror=missing-prototypes -Werror=shadow -Werror=format=2 \
	-Werror=format-security -Werror=switch-default -Werror=return-type \
	-Werror=incompatible-pointer-types -Wvla -Wpointer-arith -Wundef

HARDENING_CFLAGS  := -fPIE -fstack-protector-strong -fstack-clash-protection -fcf-protection
HARDENING_LDFLAGS := -pie -Wl,-z,relro,-z,now,-z,noexecstack

ifneq ($(SAN),)
OPTFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=$(SAN) -fno-sanitize-recover=all
SAN_LDFLAGS := -fsanitize=$(SAN)
else
OPTFLAGS := -O2 -g -D_FORTIFY_SOURCE=3
SAN_LDFLAGS :=
endif

# libFuzzer builds instrument every object for coverage.
ifeq ($(FUZZ),1)
OPTFLAGS += -fsanitize=fuzzer-no-link
endif

BOX_CFLAGS   := -std=gnu11 $(OPTFLAGS) $(WARNINGS) $(HARDENING_CFLAGS) -pipe
BOX_CPPFLAGS := -D_GNU_SOURCE -I. -Icommon -I$(BUILD)/common -I$(BUILD)/proto -Ilibboxpolicy/include -Ilibpolicyclient \
	-DBOX_VERSION='"$(BOX_VERSION)"' -MMD -MP
BOX_LDFLAGS  := $(HARDENING_LDFLAGS) $(SAN_LDFLAGS)

# Probe the libraries only for goals that compile something.
NO_PROBE_GOALS := deps clean format help check demo
ifeq ($(filter-out $(NO_PROBE_GOALS),$(or $(MAKECMDGOALS),all)),)
PKG_OK := yes
else
PKG_OK := $(shell $(PKG_CONFIG) --exists $(PKG_MODULES) && echo yes)
ifneq ($(PKG_OK),yes)
$(error missing build dependencies (pkg-config modules: $(PKG_MODULES)); run 'make deps' as root)
endif
endif

pkg_cflags = $(shell $(PKG_CONFIG) --cflags $(1))
pkg_libs   = $(shell $(PKG_CONFIG) --libs $(1))
