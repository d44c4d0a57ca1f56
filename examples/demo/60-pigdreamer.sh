# PIGDreamer (Huang et al.): the tabular bound behind asymmetric critics, then a 2k-step PIG run on
# HazardNav-PO (a smoke run, far from converged) and its deployment policy on 5 episodes.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
paperkit pigdreamer-bound -o "$out/bound.json" --plot "$out/bound.png"
paperkit pigdreamer-train --steps 2000 --prefill 500 --train-ratio 4 --eval-every 2000 --eval-episodes 4 \
  --run-dir "$out/pig"
paperkit pigdreamer-eval "$out/pig" --episodes 5 | cut -c1-300
ls "$out/pig"
