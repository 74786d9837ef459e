touch za zb zc zd; echo z[b-c]
