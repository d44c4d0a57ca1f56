# Cross-conformal prediction (Gasparin & Ramdas): sets for sklearn's diabetes data (342 train / 100 test
# rows, ridge, K = 5). The e/u/eu combiners give shorter sets than mod-cross with the same 1 - 2 alpha
# guarantee; the fold p-values feed conformal-combine; then a short run of the Barber et al. simulation.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python - "$out" <<'PY'
import sys
from paperkit.core.tables import write_table
from paperkit.datasets import load_bundled
d = load_bundled("diabetes")
cols = {name: d.X[:, j] for j, name in enumerate(d.feature_names)} | {"target": d.y}
write_table(f"{sys.argv[1]}/train.csv", {k: v[:342] for k, v in cols.items()})
write_table(f"{sys.argv[1]}/test.csv", {k: v[342:] for k, v in cols.items()})
PY
paperkit conformal-cv --train "$out/train.csv" --test "$out/test.csv" --target target --model ridge --n-folds 5 \
  --alpha 0.1 --methods mod,e-mod,u-mod,eu-mod,cross,e-cross,cvplus,split,split-2a --pvalues "$out/p.npy" \
  -o "$out/sets.csv" > "$out/summary.json"
head -3 "$out/sets.csv"
paperkit conformal-combine --pvalues "$out/p.npy" --alpha 0.1 --combiner mean,e,eu -o "$out/combined.csv"
head -4 "$out/combined.csv"
paperkit conformal-sim --p 5 --reps 50 --methods mod,e-mod,u-mod,eu-mod,cross,cvplus,split --run-dir "$out/sim"
cat "$out/sim/results.csv"
