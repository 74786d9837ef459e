set -e; false || echo recovered; echo end
