export E=exported; sh -c 'echo $E'
