# bandit-sim: regret lower bound, a short simulation of the paper's algorithms, a tiny alpha sweep.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
paperkit bandit-bound --preset official16 --alpha 0.5 --horizon 20000 -o "$out/bound.csv"   # totals: one line on stderr
cat "$out/bound.csv.summary.json"
paperkit bandit-sim --preset official16 --horizon 20000 --runs 8 --run-dir "$out/sim"
paperkit bandit-sweep --sweep alpha --values 0,0.5,1 --horizon 5000 --runs 4 --run-dir "$out/alpha"
ls "$out/sim" "$out/alpha"
