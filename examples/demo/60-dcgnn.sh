# dcgnn: generate Red-Blue graphs, train a small DC-SMGNN (GNN channel + count rule), print its rule and
# channel, then explain two graphs (relevances, rule terms, top edges).
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
paperkit dcgnn-gen --dataset redblue --n-graphs 100 -o "$out/rb.npz"
paperkit dcgnn-fit --data "$out/rb.npz" --epochs 4 --warmup 0 --hidden 16 --lr 0.01 --seeds 0 --device cpu \
  --run-dir "$out/run"
paperkit dcgnn-explain --model "$out/run/model.pt" --data "$out/rb.npz" --max-graphs 2 --top-k 3
ls "$out/run"
