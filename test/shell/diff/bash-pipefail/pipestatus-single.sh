false; echo ${PIPESTATUS[@]}
