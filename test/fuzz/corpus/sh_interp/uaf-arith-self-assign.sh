# found by fuzz_sh_interp: heap-use-after-free (a value evaluated in place assigns itself)
i=i=0; (( i++ )); (( i++ )); echo $i
