# sh is dash: a command's environment in dash's order (its 39 hash chains, each in the
# order the variables were made), so an `env` listing reads as under dash.
export Q1=a AB=b ZZ=c MAIL=m IEKB=1 TGO=2 PSHKB=3 TERM=t GNGD=g
unset AB
export AB=again
/usr/bin/env | grep -v -e '^SHLVL=' -e '^_=' -e '^HOME=' -e '^PWD='
