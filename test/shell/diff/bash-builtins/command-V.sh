command -V echo
