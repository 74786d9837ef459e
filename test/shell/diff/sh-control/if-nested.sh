if true; then if false; then echo x; else echo nested; fi; fi
