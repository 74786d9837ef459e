exec > out; echo to-file; exec >&-; cat out >&2
