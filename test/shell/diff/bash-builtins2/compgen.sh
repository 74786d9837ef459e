# compgen: names by kind and prefix; complete is accepted
compgen -k | tr '\n' ' '; echo
compgen -W "foo bar baz" -- ba; echo "st=$?"
compgen -W "foo bar" -- zz; echo "st=$?"
f() { :; }; g2() { :; }; compgen -A function; compgen -A function g
export ZZ_ONE=1 ZZ_TWO=2; ZZ_LOCAL=3; compgen -e ZZ; compgen -v ZZ
while read -r name; do echo "exported: $name"; done < <(compgen -e ZZ_)
compgen -b | grep -c '^echo$'
alias ll='ls -l'; compgen -a
complete -F f g2; echo "complete=$?"
