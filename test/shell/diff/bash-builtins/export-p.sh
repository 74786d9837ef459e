export EXP_SHCORE=1; export -p | grep EXP_SHCORE
