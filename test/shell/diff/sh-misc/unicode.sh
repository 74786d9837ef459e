x="héllo wörld"; echo "$x"; echo ${#x}
