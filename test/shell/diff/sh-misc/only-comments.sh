# nothing
#
