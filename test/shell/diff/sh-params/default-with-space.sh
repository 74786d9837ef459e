unset x; for w in ${x:-a b c}; do echo $w; done; for w in "${x:-a b c}"; do echo $w; done
