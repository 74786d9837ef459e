break; echo ok
