alias ll="echo listing"
ll x
