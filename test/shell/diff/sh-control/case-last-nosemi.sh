case a in a) echo last
esac
