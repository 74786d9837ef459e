# ++ and -- wrap around at the ends of the range as + and - do (they were
# signed overflows: undefined behaviour, which UBSan stops on).
x=9223372036854775807; echo $((x++)) $x $((++x))
y=-9223372036854775808; echo $((y--)) $y $((--y))
a=(9223372036854775807); echo $((a[0]++)) ${a[0]}
z=9223372036854775807; ((z+=1)); echo $z; ((z-=1)); echo $z
echo $(( (-9223372036854775807-1) / -1 )) $(( (-9223372036854775807-1) % -1 ))
echo $(( 2**63 )) $(( 2**64 )) $(( -(-9223372036854775807-1) )) $(( 1 << 64 ))
