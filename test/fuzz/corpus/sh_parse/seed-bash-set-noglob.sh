set -o noglob; echo *; set +o noglob
