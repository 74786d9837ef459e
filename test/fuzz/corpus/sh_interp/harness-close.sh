exec 3>&- 100>&- 101>&- 102>&- 4>&-; exec >&- 2>&-; echo gone
