{ echo bg; } & wait; echo fg
