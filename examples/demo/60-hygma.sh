# hygma: a short HYGMA-QMIX vs QMIX run on predator-prey (easy), a greedy rollout drawn in ASCII, the curves.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
paperkit hygma-train --env pp --preset easy --algo hygma-qmix,qmix --steps 2000 --eval-every 1000 \
  --cluster-every 500 --eval-episodes 8 -j 2 --run-dir "$out/pp"
paperkit hygma-eval --model "$out/pp/model.pt" --job hygma-qmix_s0 --episodes 8 --ascii 2>&1 | tail -8
paperkit hygma-plot "$out/pp" -o "$out/curves.png"
head -3 "$out/pp/groups.jsonl"
