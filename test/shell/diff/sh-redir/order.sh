{ echo e >&2; } 2>&1 >/dev/null | cat
