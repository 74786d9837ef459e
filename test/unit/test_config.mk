# test_config: box.ini loading through boxctl's config API.
UNIT_DEPS_config := $(BUILD)/boxctl/config.o $(BUILD)/boxctl/config_print.o $(BUILD)/boxctl/cmdline.o
UNIT_LIBS_config := $(call pkg_libs,inih)
