shopt -s expand_aliases
alias hi="echo hello"
hi there
