eval "echo 'a  b'"
