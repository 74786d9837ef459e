# A letter sequence across Z..a passes [ \ ] ^ _ ` (it used to crash on the
# lone '`'); bash removes a last '\' as a quote and keeps a lone '`'.
echo {Z..a}
echo {a..Z}
echo {Z..a..2}
echo {Y..a..3}
echo {Y..a..3}x
echo {Y..a..3}"x"
echo x{Y..a..3}{,}
for w in {Z..a}; do printf '<%s>' "$w"; done; echo
echo {x{a,b} {a{1,2}} {,}{,}x a{b,c{d,e}f,"g,h"}i{1..2}
echo {${x:-{c,d}},e} ${x:-{c,d}} {a,b${x:-{c,d}}}
echo {1..99999999999999999999} {9223372036854775806..9223372036854775807}
echo {-9223372036854775808..-9223372036854775807}
echo {1..5..-2} {5..1..2} {a..e..0} {01..3} {-01..2}
# a '`' with text after it: bash refuses it (the last line: box-sh then exits)
echo x{Z..a}y
