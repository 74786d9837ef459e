case x in a|x|y) echo match;; esac
