echo `echo one` `echo two`
