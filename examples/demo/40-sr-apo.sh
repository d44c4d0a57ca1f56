# sr-apo: exhaustive APO front of a tiny planted formula (head length 2), two shards merged, and a gap table.
out=$(mktemp -d)
python - "$out/planted.csv" <<'PY'
import sys
import numpy as np
rng = np.random.default_rng(0)
X = rng.normal(size=(100, 2)) * [1.0, 2.0]
y = 3 * X[:, 0] - 2 * X[:, 1] + 0.05 * rng.normal(size=100)
with open(sys.argv[1], "w") as f:
    f.write("u,v,target\n" + "".join(f"{a!r},{b!r},{c!r}\n" for a, b, c in zip(X[:, 0].tolist(), X[:, 1].tolist(), y.tolist())))
PY
paperkit sr-apo-search --data "$out/planted.csv" --head 2 --run-dir "$out/full" -q
paperkit sr-apo-search --data "$out/planted.csv" --head 2 --shard 1/2 --run-dir "$out/s1" -q > /dev/null
paperkit sr-apo-search --data "$out/planted.csv" --head 2 --shard 2/2 --run-dir "$out/s2" -q > /dev/null
paperkit sr-apo-front --summaries "$out/s1" --summaries "$out/s2" --feature-names u,v -o "$out/merged.csv"
cmp "$out/merged.csv" "$out/full/front.csv" && echo "shards merged = unsharded front" >&2
printf 'algorithm,length,R2\nmy-sr,3,0.5\nmy-sr,7,0.99\n' > "$out/models.csv"
paperkit sr-apo-compare --front "$out/full/front.csv" --models "$out/models.csv" -o -
rm -rf "$out"
