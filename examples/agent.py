#!/usr/bin/python3
# The demo agent: one allowed and one refused file access.
import os
print("agent: reading README.txt:", open("README.txt").read().strip())
try:
    open(".env").read()
    print("agent: read .env (this must not happen)")
except OSError as e:
    print("agent: reading .env refused:", os.strerror(e.errno))
