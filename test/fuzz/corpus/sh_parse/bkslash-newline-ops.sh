# A backslash-newline inside an operator joins it: &\<nl>& is &&, |\<nl>| is ||, ;\<nl>; is ;;
true &\
& echo and1
false |\
| echo or1
echo a |\
 cat
case w in a) echo no;\
; w) echo case-ok;\
; esac
echo ok >\
> out.txt
cat <\
out.txt
echo x; \
echo y
# inside a comment it stays: this line ends \
echo after-comment
