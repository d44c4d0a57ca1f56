# mm-prefill: search per-head sparse patterns on a small synthetic video+text sample, apply them, time them.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cat > "$out/spec.yaml" <<'YAML'
frames: 8
height: 8
width: 8
text_prefix: 32
text_suffix: 32
text_len: 16
heads: [grid, vs, a_shape, block, 2d_boundary]
YAML
paperkit mm-prefill-search --synthetic "$out/spec.yaml" --block-size 32 --density 0.2 -o "$out/patterns.json"
paperkit mm-prefill --synthetic "$out/spec.yaml" --block-size 32 --patterns "$out/patterns.json" --masks --run-dir "$out/apply"
paperkit mm-prefill-bench --n 2048,4096 --heads 2 --dim 64 --density 0.1 --repeats 1 --device cpu --run-dir "$out/bench"
ls "$out/apply" "$out/bench"
