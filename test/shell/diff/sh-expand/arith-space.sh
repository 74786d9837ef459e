echo $((  1   +   1  ))
