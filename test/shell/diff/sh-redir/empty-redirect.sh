> empty; [ -f empty ] && [ ! -s empty ] && echo empty
