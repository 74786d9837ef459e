x=ab; echo ${x}c $xc.
