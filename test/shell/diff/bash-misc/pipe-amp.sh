{ echo out; echo err >&2; } |& cat
