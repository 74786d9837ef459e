echo $((1/0)); echo after
