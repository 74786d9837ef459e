case abc in a*) echo A;; b*) echo B;; esac
