mkdir sub; (cd sub && pwd | sed "s|.*/||"); pwd | sed "s|.*/||"
