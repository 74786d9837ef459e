echo "SV=sourced" > lib.sh; . ./lib.sh; echo $SV
