case x in
  x)
    echo one
    echo two
    ;;
esac
