exec echo replaced; echo never
