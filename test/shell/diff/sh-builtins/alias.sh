alias hi="echo hello"
hi there
