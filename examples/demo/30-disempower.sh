# disempower-sim: one scenario (ODE and agents), the claims as scenario contrasts, a Monte Carlo over the priors.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
paperkit disempower-sim --scenario late_mitigation --run-dir "$out/late"
paperkit disempower-sim --mode abm --households 20000 --horizon 30 --run-dir "$out/abm"
paperkit disempower-compare baseline_incremental early_mitigation late_mitigation ubi_redistribution \
  --run-dir "$out/compare"
paperkit disempower-sweep --mc 500 --scenario early_mitigation --run-dir "$out/mc"
paperkit disempower-explain --scenario ubi_redistribution --set W.econ.state=0.3 > "$out/explain.txt"
grep -c "claim" "$out/explain.txt"
ls "$out/late" "$out/compare"
