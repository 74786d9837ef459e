echo `echo \`echo in\``
