set -e; false | true; echo continues
