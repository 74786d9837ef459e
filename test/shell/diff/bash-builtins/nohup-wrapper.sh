nohup echo hup 2>/dev/null
