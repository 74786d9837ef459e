f() { :; }; function g { :; }; function h() ( : ) >x
f ( )
