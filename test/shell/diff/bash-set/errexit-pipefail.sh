set -eo pipefail; false | true; echo never
