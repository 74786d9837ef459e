touch f; mkdir d; [ -f f ] && echo f; [ -d d ] && echo d; [ -e nope ] || echo nope; [ -s f ] || echo empty
