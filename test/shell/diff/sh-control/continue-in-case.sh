for i in 1 2 3; do
  case $i in
    2) continue ;;
  esac
  echo $i
done
until false; do echo once; break; done
