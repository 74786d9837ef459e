set -- '' "" x; echo $#
