x=1; [[ -v x ]] && echo set; [[ -v nope ]] || echo unset
