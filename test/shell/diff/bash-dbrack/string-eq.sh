[[ abc == abc ]] && echo eq; [[ abc != x ]] && echo ne
