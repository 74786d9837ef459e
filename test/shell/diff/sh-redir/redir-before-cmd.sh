> f echo first; cat f
