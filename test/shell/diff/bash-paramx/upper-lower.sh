x=Hello; echo ${x^^} ${x,,} ${x^} ${x,}
