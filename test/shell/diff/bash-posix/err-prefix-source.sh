# messages name the file being read: a `.` file's own name and line, then the script's again
printf '\n\nnosuch_posix_cmd\n' > s.sh
. ./s.sh
echo "st $?"
nosuch_posix_cmd2
eval 'echo in eval; nosuch_in_eval'
eval 'case x in x) ;; esac; esac'
echo "eval $?"
x=${1x}
