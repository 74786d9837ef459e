x=$(ll); y="$(ll a)"; alias ll=z
echo $(ll)
