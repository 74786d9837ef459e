# pushd popd dirs: the stack, each change decided as cd's
cd /
pushd /usr
pushd /usr/share
dirs; dirs -p; dirs -v
pushd
popd; popd
popd; echo "empty=$?"
pushd /nonexistent-dir; echo "st=$?"
pwd
HOME=/usr; pushd /usr/lib >/dev/null; dirs; dirs -l; dirs -c; dirs
