# rgtg: a toy task, a fitted base LM, a FaRMA token-level RM, and FaRMA vs ARGS decoding with their LM/RM call counts.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
paperkit rgtg-toy --pairs 600 --prompts 40 --run-dir "$out/task"
paperkit rgtg-train-lm --samples "$out/task/rollouts.jsonl" --vocab-from "$out/task/lm.pt" --epochs 1 \
  --d-model 32 --layers 1 -j 1 --run-dir "$out/lm"
paperkit rgtg-train-rm --lm "$out/task/lm.pt" --pairs "$out/task/pairs.jsonl" --heldout "$out/task/heldout.jsonl" \
  --iters 3 -j 1 --run-dir "$out/rm"
paperkit rgtg-generate --lm "$out/task/lm.pt" --rm "$out/rm/rm.pt" --prompts "$out/task/prompts.jsonl" \
  --scorer "$out/task/reward.json" --method ref --method farma --method args -j 1 --run-dir "$out/gen"
