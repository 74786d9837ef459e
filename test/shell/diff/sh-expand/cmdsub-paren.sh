echo $( (echo sub) )
