[[ hello == h*o ]] && echo match; [[ hello == "h*o" ]] || echo literal
