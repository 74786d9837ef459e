set -e; x=$(false); echo never
