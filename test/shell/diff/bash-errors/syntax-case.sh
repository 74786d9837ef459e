case x in
x) echo a;;

