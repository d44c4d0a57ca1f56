# kgfm: ConnectHub(2), its motif lift, the WL test (F2 ties the hub relations, star3 separates), a tiny MOTIF run.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
paperkit kgfm-gen --kind connecthub --k 2 --graphs 3 --run-dir "$out/ch2"
paperkit kgfm-lift --graph "$out/ch2/train.tsv" --motifs f2,f3,star3 -o "$out/hyperedges.csv"
paperkit kgfm-wl --graph "$out/ch2/train.tsv" --motifs f2,star3 --query g0:r0 --source g0:u -o "$out/colors.csv"
paperkit kgfm-gen --kind rules --entities 100 --types 8 --relations 10 --rules 3 --run-dir "$out/rules"
paperkit kgfm-motif --train "$out/rules/train.tsv" --train-queries "$out/rules/train_queries.tsv" --motifs f3 \
  --dim 16 --layers 2 --epochs 1 --batch-size 64 --run-dir "$out/f3"
paperkit kgfm-eval --model "$out/f3/model.pt" --graph "$out/rules/test_graph.tsv" --queries "$out/rules/test.tsv"
