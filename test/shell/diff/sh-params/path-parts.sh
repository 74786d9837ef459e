p=/usr/local/lib/file.tar.gz; echo ${p##*/} ${p%/*} ${p#*.} ${p%%.*}
