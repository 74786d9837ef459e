echo {5..1}
