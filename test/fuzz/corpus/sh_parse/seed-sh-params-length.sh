x=hello; echo ${#x}; y=; echo ${#y}
