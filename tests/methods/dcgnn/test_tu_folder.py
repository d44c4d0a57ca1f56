"""A TU folder is read from its raw text files only: nothing is written into it, nothing in it is unpickled."""

import numpy as np
import pytest

from paperkit.methods.dcgnn.data import read_tu


def _write_tu(root, name="TOY"):
    raw = root / name / "raw"
    raw.mkdir(parents=True)
    (raw / f"{name}_A.txt").write_text("1, 2\n2, 1\n2, 3\n3, 2\n3, 3\n4, 5\n5, 4\n4, 5\n")  # a self-loop, a repeat
    (raw / f"{name}_graph_indicator.txt").write_text("1\n1\n1\n2\n2\n3\n")
    (raw / f"{name}_graph_labels.txt").write_text("1\n-1\n1\n")
    (raw / f"{name}_node_labels.txt").write_text("0\n1\n0\n1\n1\n2\n")
    (raw / f"{name}_node_attributes.txt").write_text("0.5\n1.5\n2.5\n3.5\n4.5\n5.5\n")
    return root / name


def test_features_edges_and_labels_as_pyg_defines_them(tmp_path):
    gs = read_tu(_write_tu(tmp_path))
    np.testing.assert_array_equal(gs.graph_ptr, [0, 3, 5, 6])
    np.testing.assert_array_equal(gs.y, [1, 0, 1])
    # node attributes first, then the one-hot node labels; self-loops dropped, repeats merged, edges sorted
    np.testing.assert_allclose(gs.x[:, 0], [0.5, 1.5, 2.5, 3.5, 4.5, 5.5])
    np.testing.assert_array_equal(gs.x[:, 1:].argmax(1), [0, 1, 0, 1, 1, 2])
    np.testing.assert_array_equal(gs.edge_index, [[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])


def test_nothing_is_written_into_the_folder_and_a_planted_cache_never_runs(tmp_path):
    """TUDataset cached into <NAME>/processed/ and loaded that cache with weights_only=False when the safe load
    failed: a planted processed/data.pt ran its payload (found by a bad-input audit)."""
    torch = pytest.importorskip("torch")
    folder = _write_tu(tmp_path)
    marker = tmp_path / "PWNED"

    class Payload:
        def __reduce__(self):
            return (exec, (f"open({str(marker)!r}, 'w').close()",))

    (folder / "processed").mkdir()
    for name in ("data.pt", "pre_filter.pt", "pre_transform.pt"):
        torch.save(Payload(), folder / "processed" / name)
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    gs = read_tu(folder)
    assert gs.n_graphs == 3 and not marker.exists()
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before
