case q in a) ;; esac; echo $?
