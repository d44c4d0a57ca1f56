"""Offline data: scikit-learn's bundled sets, generators, and splitting helpers.

Nothing here downloads. Loaders return plain arrays; splitting helpers take a NumPy ``Generator``.
"""

from paperkit.datasets.bundled import BUNDLED, Dataset, load_bundled
from paperkit.datasets.splits import dirichlet_partition, kfold_indices, train_test_indices

__all__ = ["BUNDLED", "Dataset", "load_bundled", "dirichlet_partition", "kfold_indices", "train_test_indices"]
