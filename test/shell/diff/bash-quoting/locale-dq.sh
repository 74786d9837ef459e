echo $"plain"
