"""Write sklearn's diabetes data as a seeded 75/25 train/test split: split_diabetes.py SEED OUTDIR."""

import sys

import numpy as np

from paperkit.core.tables import write_table
from paperkit.datasets import load_bundled

seed, out = int(sys.argv[1]), sys.argv[2]
d = load_bundled("diabetes")
perm = np.random.default_rng(seed).permutation(len(d.y))
cols = {name: d.X[:, j] for j, name in enumerate(d.feature_names)} | {"target": d.y}
write_table(f"{out}/train.csv", {k: v[perm[:332]] for k, v in cols.items()})
write_table(f"{out}/test.csv", {k: v[perm[332:]] for k, v in cols.items()})
