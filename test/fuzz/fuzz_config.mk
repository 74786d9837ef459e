# fuzz_config: box.ini loading (offline) and command re-quoting.
FUZZ_DEPS_config := $(BUILD)/boxctl/config.o $(BUILD)/boxctl/config_print.o $(BUILD)/boxctl/cmdline.o
FUZZ_LIBS_config := $(call pkg_libs,inih)
