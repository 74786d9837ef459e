# shopt: every bash option listed (a harness's snapshot saves `shopt -p` and sources it back),
# options without effect here keep what a script set, login_shell follows -l, -o takes set -o names
shopt -p
shopt | head -5
shopt -s globstar cdspell; echo "st=$?"
shopt -p globstar cdspell
shopt -q globstar; echo "q=$?"
shopt -u globstar; shopt globstar; echo "st=$?"
shopt -s nosuch 2>&1; echo "st=$?"
shopt -su dotglob 2>&1; echo "st=$?"
shopt -z 2>&1; echo "st=$?"
shopt -s | head -3
shopt -u | head -3
shopt -o -p errexit nounset
shopt -os nounset; shopt -po nounset; set +u
shopt -qo errexit; echo "qo=$?"
shopt -o nosuch 2>&1; echo "st=$?"
shopt login_shell
bash -lc 'shopt -p login_shell'
bash --login -c 'shopt -p login_shell'
bash -c 'shopt -p login_shell'
shopt -s login_shell 2>&1; shopt -p login_shell
snap=$(shopt -p); shopt -s extquote nocasematch; eval "$snap"; shopt -p extquote nocasematch
