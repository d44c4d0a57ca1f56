"""Average the per-seed conformal-cv summaries into one table: summarize_diabetes.py OUT.csv S1.json ..."""

import sys

import numpy as np

from paperkit.core.io import read_json
from paperkit.core.tables import write_table

out, paths = sys.argv[1], sys.argv[2:]
runs = [read_json(p) for p in paths]
rows = []
for m, first in runs[0]["methods"].items():
    cov = [r["methods"][m]["coverage"] for r in runs]
    length = [r["methods"][m]["mean_length"] for r in runs]
    rows.append({"method": m, "guarantee": first["guarantee"], "coverage": round(float(np.mean(cov)), 4),
                 "mean_length": round(float(np.mean(length)), 2), "seeds": len(runs)})
write_table(out, rows)
