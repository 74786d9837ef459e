case x in (a|b) echo;; c) ;& d) ;;& *) esac
case
