echo ${x?custom message}; echo after
