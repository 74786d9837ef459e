false || echo yes; true || echo no
