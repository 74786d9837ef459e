command echo via-command
