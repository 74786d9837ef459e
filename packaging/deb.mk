# SPDX-License-Identifier: Apache-2.0
# packaging/deb.mk — `make deb`: the Debian package, built by debhelper from a copy of the
# tree (the files git tracks or would track) with packaging/deb/ as its debian/ and the
# sysusers.d and tmpfiles.d files of packaging/ as debian/box.sysusers and box.tmpfiles
# (one copy of each in the tree). The tests are not run (DEB_BUILD_OPTIONS=nocheck: they
# are `make check`'s). The package lands in $(BUILD)/deb/.
# Trusts: the tree.
DEB_VERSION := $(shell dpkg-parsechangelog -l packaging/deb/changelog -S Version 2>/dev/null)
DEB_ARCH    := $(shell dpkg --print-architecture 2>/dev/null)
DEB_STAGE   := $(BUILD)/deb/box-$(DEB_VERSION)
DEB_FILE    := $(BUILD)/deb/box_$(DEB_VERSION)_$(DEB_ARCH).deb

deb:
	@test "$(DEB_VERSION)" = "$(BOX_VERSION)" || \
		{ echo "deb: packaging/deb/changelog says $(DEB_VERSION), config.mk BOX_VERSION $(BOX_VERSION)" >&2; exit 1; }
	rm -rf $(BUILD)/deb
	mkdir -p $(DEB_STAGE)
	git ls-files -z -co --exclude-standard | grep -zv '^packaging/deb/' | \
		xargs -0 tar -cf - --no-recursion | tar -xf - -C $(DEB_STAGE)
	cp -a packaging/deb $(DEB_STAGE)/debian
	cp packaging/sysusers.d/box.conf $(DEB_STAGE)/debian/box.sysusers
	cp packaging/tmpfiles.d/box.conf $(DEB_STAGE)/debian/box.tmpfiles
	cd $(DEB_STAGE) && DEB_BUILD_OPTIONS="nocheck parallel=$(JOBS) $(DEB_BUILD_OPTIONS)" \
		dpkg-buildpackage -b -us -uc
	@echo "deb: $(DEB_FILE)"

# The package's path, for the tests.
print-deb:
	@echo $(DEB_FILE)

.PHONY: deb print-deb
