set -x; echo traced "a b"; x=1; set +x; echo quiet
