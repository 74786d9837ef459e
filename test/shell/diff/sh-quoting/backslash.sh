echo a\ b \$x \\ \'
