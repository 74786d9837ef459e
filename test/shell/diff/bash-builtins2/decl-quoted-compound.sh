# A quoted or expanded NAME='(…)' after a declaration builtin is a compound assignment only with
# -a/-A or for declare/typeset/local of an array; export and readonly assign it as a string.
# readonly and export take -a and -A.
declare 'a=(1 2)'; declare -p a
declare -a 'b=(1 2)'; declare -p b
c=(x); declare 'c=(1 2)'; declare -p c
export 'd=(1 2)'; declare -p d
export -a 'e=(1 2)'; declare -p e
f=(x); export 'f=(1 2)'; declare -p f
x='(1 2)'; declare -a g=$x; declare -p g
readonly -A 'h=([k]=v)'; declare -p h
readonly -a i=(1 2); declare -p i
j=(1); fn() { local 'j=(3 4)'; declare -p j; }; fn
r=(1)
readonly r
fn() { readonly r=(4) ; }; fn 2>&1
declare -p r
fn() { readonly r='(5)' ; }; fn 2>&1
declare -p r
fn() { readonly -a r=(6) ; }; fn 2>&1
declare -p r
fn() { readonly -a r='(7)' ; }; fn 2>&1
declare -p r
s=(outside)
fn() { readonly -a s=(2) ; }; fn; declare -p s
t=(outside)
fn() { readonly 't=(3)' ; }; fn; declare -p t
u=(1)
export u
fn() { export u='(5)' ; }; fn; declare -p u
fn() { export -a u='(7)' ; }; fn; declare -p u
