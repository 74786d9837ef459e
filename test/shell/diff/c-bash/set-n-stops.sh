echo a; set -n; echo NO
echo NO2
