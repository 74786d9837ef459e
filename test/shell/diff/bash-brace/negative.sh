echo {-2..2}
