exec 5>&1; echo via5 >&5; exec 5>&-
