x=1; ((x<<=3)); echo $x
