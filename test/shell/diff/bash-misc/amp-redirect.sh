{ echo o; echo e >&2; } &> f; cat f
