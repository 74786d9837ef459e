if true; then
echo x
