case a in a) ;; esac; echo ok
