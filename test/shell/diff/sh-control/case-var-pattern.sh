p="a*"; case abc in $p) echo pat;; esac
