echo if then fi done
