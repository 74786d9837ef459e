if false; true; then echo last-counts; fi
