printf "x\ny\n" | xargs -I{} echo "<{}>"
