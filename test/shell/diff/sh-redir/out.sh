echo hi > f; cat f
