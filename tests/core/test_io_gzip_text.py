"""Gzip-compressed text tables are written whole, deterministically, and read back."""

from paperkit.core import tables


def test_write_table_gz_round_trip_and_same_bytes(tmp_path):
    a, b = tmp_path / "a.csv.gz", tmp_path / "b.csv.gz"
    for p in (a, b):
        tables.write_table(p, {"x": [1.5, 2.0], "name": ["u", "v"]}, fmt="csv")
    assert a.read_bytes() == b.read_bytes()
    t = tables.read_table(a)
    assert t.columns == ["x", "name"] and t.column("x").tolist() == [1.5, 2.0]
