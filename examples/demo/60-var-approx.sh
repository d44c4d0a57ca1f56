# var-approx: the pyramid's token count, the proof's construction on a grid, the multi-scale tokenizer, a short fit.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python -c "import numpy as np; np.save('$out/x.npy', np.random.default_rng(0).uniform(size=(4, 2, 2, 4)))"
paperkit var-approx-pyramid --input "$out/x.npy" --scales 2,4,8 --mask block -o "$out/pyramid.npy"
paperkit var-approx-construct --init 2x2 --dim 1 --delta 0.25 -o "$out/construct.json"
paperkit var-approx-tokenize --side 8 --scales 1,2,4,8 --n-images 300 --n-test 60 --run-dir "$out/tok"
paperkit var-approx --target context --steps 100 --n-train 256 --n-test 128 --width 32 --run-dir "$out/fit"
ls "$out/fit" "$out/tok"
