touch f; [[ -f f && -r f ]] && echo file
