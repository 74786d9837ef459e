function f { echo kw; }; f
