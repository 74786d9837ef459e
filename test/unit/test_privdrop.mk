UNIT_LIBS_privdrop := $(call pkg_libs,libcap)
