cat <<< "here string"
