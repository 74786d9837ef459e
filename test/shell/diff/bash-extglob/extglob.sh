# extglob: globbing, case, [[ ]], ${x#p} ${x/p/r}; shopt nullglob, dotglob
touch a.c b.h c.txt foo.c .hid
shopt -s extglob
echo !(*.c)
echo @(a|b).@(c|h)
echo *.+(c|h)
x=foo.tar.gz
echo ${x%%.@(gz|bz2)} ${x##*.} ${x/@(tar|zip)/ZIP} ${x//+(o)/0}
case $x in *.@(gz|xz)) echo gz;; *) echo no;; esac
case aaa in +(a)) echo plus;; esac
case ab in ?(a)b) echo opt;; esac
case "" in *(x)) echo star-empty;; esac
case abab in *(ab)) echo star-rep;; esac
case foo in !(foo)) echo neg;; *) echo notneg;; esac
case "@(x)" in "@(x)") echo quoted-literal;; esac
[[ abc == a@(b|x)c ]] && echo dbrack
[[ abc == !(abc) ]] || echo dbrack-neg
shopt extglob; shopt -q extglob && echo q
shopt -u extglob; shopt extglob
shopt -s nullglob; echo none*.zz end; shopt -u nullglob; echo none*.zz
shopt -s dotglob; echo .h* *hid; shopt -u dotglob
