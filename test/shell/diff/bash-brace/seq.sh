echo {1..5}
