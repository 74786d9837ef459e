{ { echo deep; }; }
