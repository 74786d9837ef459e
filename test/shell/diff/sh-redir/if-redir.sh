if true; then echo in-if; fi > f; cat f
