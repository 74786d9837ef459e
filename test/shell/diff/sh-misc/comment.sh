# comment
echo a # trailing
# end
