"""Write the example datasets (sklearn, offline) and a stepwise linear 'other method' to compare.

python make_data.py OUT_DIR
"""

import sys
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes, make_friedman1

from paperkit.core.tables import write_table


def main(out: Path) -> None:
    d = load_diabetes()
    names = list(d.feature_names)
    write_table(out / "diabetes.csv", {**{n: d.data[:, i] for i, n in enumerate(names)}, "target": d.target})
    X, y = make_friedman1(n_samples=300, n_features=5, noise=0.5, random_state=0)
    write_table(out / "friedman1.csv", {**{f"x{j}": X[:, j] for j in range(5)}, "target": y})
    # Forward stepwise least squares on bmi, bp, s5 (standardised, no intercept needed): k features
    # as Add(...Mul(x, c)...) have 4k - 1 nodes in the paper's length rule.
    Z = (d.data - d.data.mean(0)) / d.data.std(0)
    z = (d.target - d.target.mean()) / d.target.std()
    pool, chosen, rows = [names.index(c) for c in ("bmi", "bp", "s5")], [], []
    while pool:
        best = max(pool, key=lambda j: _r2(Z[:, chosen + [j]], z))
        chosen.append(best)
        pool.remove(best)
        rows.append({"algorithm": "stepwise-OLS", "length": 4 * len(chosen) - 1, "R2": _r2(Z[:, chosen], z),
                     "features": "+".join(names[j] for j in chosen)})
    write_table(out / "stepwise_models.csv", rows)


def _r2(A: np.ndarray, z: np.ndarray) -> float:
    beta, *_ = np.linalg.lstsq(A, z, rcond=None)
    return float(1 - np.sum((z - A @ beta) ** 2) / np.sum(z ** 2))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
