printf "%5s|%-5s|%.2s\n" ab cd efgh
