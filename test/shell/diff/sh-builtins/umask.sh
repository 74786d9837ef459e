umask 022; umask; umask 077; umask
