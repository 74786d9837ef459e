mkdir x; cd x; cd - >/dev/null; basename "$PWD"
