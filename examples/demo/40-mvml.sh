# TMvML (mvml-fit): multi-view multi-label classification with the Laplace Tensor Rank.
out=$(mktemp -d)
paperkit mvml-make --dataset synthetic --n 300 --run-dir "$out/data"
paperkit mvml-fit --views "$out/data/view1.npy,$out/data/view2.npy,$out/data/view3.npy" --labels "$out/data/labels.npy" \
  --m 16 --cv 2 --methods tmvml,ridge-view --run-dir "$out/run"
paperkit mvml-predict --model "$out/run/model.npz" --views "$out/data/view1.npy,$out/data/view2.npy,$out/data/view3.npy" \
  --what labels -o "$out/labels.jsonl"
head -3 "$out/labels.jsonl"
rm -rf "$out"
