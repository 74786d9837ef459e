type echo; type cd
