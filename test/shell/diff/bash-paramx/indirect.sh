name=target; target=value; echo ${!name}
