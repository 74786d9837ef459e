set -u; y=$(echo $x); echo "cmdsub $?"
