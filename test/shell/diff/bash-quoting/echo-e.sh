echo -e "a\tb" "c\\d"
