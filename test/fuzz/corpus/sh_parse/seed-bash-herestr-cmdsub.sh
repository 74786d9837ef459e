cat <<< "$(echo sub)"
