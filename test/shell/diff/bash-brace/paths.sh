echo /usr/{bin,lib}
