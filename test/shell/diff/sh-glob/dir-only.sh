mkdir -p d1 d2; touch f1; echo */
