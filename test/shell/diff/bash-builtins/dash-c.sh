dash -c "echo dash-nested"
