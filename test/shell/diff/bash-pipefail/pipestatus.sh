(exit 1) | (exit 2) | (exit 0); echo "${PIPESTATUS[0]} ${PIPESTATUS[1]} ${PIPESTATUS[2]}"
