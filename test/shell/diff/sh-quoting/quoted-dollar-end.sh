echo "cost: $" '$'
