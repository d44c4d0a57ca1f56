# sve: render 16 labelled diagrams (with overlays) and run the shipped small checkpoint (64 px) on them.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
paperkit sve-render --n 16 --size 64 --seed 0 -o "$out/demo.npz" --png-dir "$out/png"
paperkit sve-predict --images "$out/demo.npz" --model sve-small --device cpu -o "$out/preds.jsonl"
head -c 300 "$out/preds.jsonl"; echo
ls "$out/png" | head -3
