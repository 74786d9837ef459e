function g() { echo kwp; }; g
