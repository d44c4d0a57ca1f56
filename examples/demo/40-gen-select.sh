# gen-select: a short switching-instance comparison, a written instance replayed, the online router.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
paperkit gen-select --synthetic switch --eta 1 --horizon 1000 --runs 2 --learners pak-ucb,rff-ucb,greedy,oracle --run-dir "$out/sw"
paperkit gen-select-sim --synthetic switch --prompts 200 --run-dir "$out/inst"
paperkit gen-select --contexts "$out/inst/contexts.npy" --scores "$out/inst/scores.npy" --learners rff-ucb,oracle --horizon 500 --runs 1 --run-dir "$out/replay"
printf '{"context": [0.1, 0.2], "id": "a"}\n{"id": "a", "score": 0.7}\n{"context": [0.3, -0.1]}\n' | paperkit gen-select-online --state "$out/state.npz" --models sd15,pixart
