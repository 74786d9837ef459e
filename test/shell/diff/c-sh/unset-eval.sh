set -u; eval 'echo $x'; echo after
