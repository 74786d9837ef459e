touch y1 y2 y3; echo y[!1]
