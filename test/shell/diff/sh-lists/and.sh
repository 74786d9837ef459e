true && echo yes; false && echo no; echo end
