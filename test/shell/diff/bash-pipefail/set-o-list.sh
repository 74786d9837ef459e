set -o pipefail; set -o | grep pipefail
