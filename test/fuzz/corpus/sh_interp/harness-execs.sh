exec /bin/ls; ls; /bin/true
