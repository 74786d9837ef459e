echo { } {a}
