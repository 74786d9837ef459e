stdbuf -oL echo buffered
