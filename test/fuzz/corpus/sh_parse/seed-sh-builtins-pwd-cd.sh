mkdir -p a/b; cd a/b; basename "$(pwd)"; cd ..; basename "$PWD"
