mkdir -p src; touch src/a.c src/b.c; cd src; cd ..; for f in src/*.c; do echo "file: $f"; done
