false; exit
