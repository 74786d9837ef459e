while true; do echo x; done done
