touch b a c; echo *
