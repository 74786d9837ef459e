# Inside a bracket expression a quoted '-' is no range and a quoted '^' or '!' no negation
touch f0 f1 f9 f- f^
echo f[0"-9"] f[0'-'9] f[0\-9] f[0-9]
echo f["^"0] f[\^] f["!"0]
case - in [a\-c]) echo dash-ok;; *) echo dash-wrong;; esac
case b in [a"-"c]) echo b-wrong;; *) echo b-ok;; esac
case ^ in [\^]) echo caret-ok;; *) echo caret-wrong;; esac
case x in ["^"x]) echo x-ok;; *) echo x-wrong;; esac
x=-9; case 5 in [0$x]) echo range;; *) echo norange;; esac
case 5 in [0"$x"]) echo range;; *) echo norange;; esac
v=a-b; echo ${v#*"-"} ${v%"-"*}
