x=file.tar.gz; echo ${x/.*/}
