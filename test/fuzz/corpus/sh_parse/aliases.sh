ll; ll ll; alias ll=x
ll
