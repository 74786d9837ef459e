# A backslash an unquoted expansion gives quotes the next character in pathname expansion
# (bash 5.2; dash keeps it literal): v='\*' globs a literal '*', 'dir*/\name' finds dir1/name
touch Zf 'Z\f' ab 'a\b' x-y 'x\y'
mkdir dir1 && touch dir1/name
v='\*'; echo Z$v "Z$v"
v='a\b*'; echo $v
v='a\\b*'; echo $v
v='x[\-]y'; echo $v
v='Z\'; echo $v*
v='[\]'; echo Z$v
v='*\'; echo $v
v='\a*'; echo $v
v='dir*/\name'; echo $v
v='dir*/\name_none'; echo $v
v='a\b'; echo $v
