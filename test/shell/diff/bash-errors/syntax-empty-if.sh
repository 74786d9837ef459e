if ; then echo x; fi
