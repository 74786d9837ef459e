x="*"; case a in "$x") echo literal;; *) echo glob;; esac
