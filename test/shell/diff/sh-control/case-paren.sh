case b in (a) echo a;; (b) echo b;; esac
