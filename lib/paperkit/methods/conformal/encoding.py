"""Feature columns of a table as a numeric matrix, with one-hot columns for categorical features.

``conformal-cv --categorical auto`` one-hots every non-numeric feature column (``--categorical a,b``
names them): a column ``colour`` with values blue, red becomes ``colour=blue`` and ``colour=red``
(0/1), categories sorted as in scikit-learn's ``OneHotEncoder``. Categories come from the training
table; a test value not seen in training gets zeros in every column of its feature (scikit-learn's
``handle_unknown="ignore"``) and is counted in the summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from paperkit.core.errors import InputError, UsageError
from paperkit.core.tables import Table

_MISSING = frozenset({"", "na", "nan", "n/a", "null", "none", "-nan"})


def _category(v: object) -> str:
    if isinstance(v, (float, np.floating)):
        f = float(v)
        return str(int(f)) if f.is_integer() else repr(f)
    return str(v).strip()


@dataclass(frozen=True)
class FeatureEncoder:
    """The feature columns in order and, for each categorical one, its training categories."""

    columns: tuple[str, ...]
    categories: dict[str, tuple[str, ...]]

    @property
    def names(self) -> list[str]:
        """Names of the matrix columns: a numeric feature's own name, ``col=value`` for a one-hot column."""
        out: list[str] = []
        for c in self.columns:
            out.extend([f"{c}={v}" for v in self.categories[c]] if c in self.categories else [c])
        return out

    def transform(self, table: Table) -> tuple[np.ndarray, dict[str, int]]:
        """The (rows, len(names)) matrix and, per categorical column, how many values were unseen."""
        missing = [c for c in self.columns if not table.has(c)]
        if missing:
            raise InputError(f"{table.source}: missing feature column(s) {', '.join(repr(c) for c in missing)}; "
                             "expected the feature columns of the training table")
        parts, unseen = [], {}
        for c in self.columns:
            if c not in self.categories:
                try:
                    parts.append(table.numeric([c]))
                except InputError as e:
                    if "non-numeric" in str(e):
                        raise InputError(f"{e}; one-hot text columns with --categorical auto") from None
                    raise
                continue
            values = [_category(v) for v in table.column(c)]
            _check_present(values, c, table.source)
            cats = self.categories[c]
            index = {v: j for j, v in enumerate(cats)}
            block = np.zeros((len(values), len(cats)))
            n_unseen = 0
            for i, v in enumerate(values):
                j = index.get(v)
                if j is None:
                    n_unseen += 1
                else:
                    block[i, j] = 1.0
            parts.append(block)
            unseen[c] = n_unseen
        return (np.hstack(parts) if parts else np.empty((len(table), 0))), unseen


def _check_present(values: Sequence[str], column: str, source: str) -> None:
    bad = [i for i, v in enumerate(values) if v.lower() in _MISSING]
    if bad:
        rows = ", ".join(map(str, bad[:5])) + (" ..." if len(bad) > 5 else "")
        raise InputError(f"{source}: categorical column '{column}' has {len(bad)} missing value(s) (rows {rows}, "
                         "0-based); expected a category in every row")


def categorical_columns(table: Table, columns: Sequence[str], spec: str | None) -> list[str]:
    """The categorical feature columns named by ``spec``: None/'none', 'auto' (non-numeric ones) or 'a,b'."""
    text = (spec or "none").strip()
    if text == "none":
        return []
    if text == "auto":
        return [c for c in columns if table.column(c).dtype == object]
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in columns]
    if unknown:
        raise UsageError(f"--categorical names {', '.join(repr(n) for n in unknown)}, not a feature column "
                         f"(features: {', '.join(list(columns)[:20])}); expected auto, none or feature names")
    return [c for c in columns if c in names]


def fit_encoder(table: Table, columns: Sequence[str], spec: str | None) -> FeatureEncoder:
    """Categories of each categorical column, from the training table (sorted)."""
    cats = {}
    for c in categorical_columns(table, columns, spec):
        values = [_category(v) for v in table.column(c)]
        _check_present(values, c, table.source)
        cats[c] = tuple(sorted(set(values)))
    return FeatureEncoder(tuple(columns), cats)
