set -e; ! true; echo continued
