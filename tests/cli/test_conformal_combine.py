"""conformal-combine: values against the library, file formats, bad input."""

import json

import numpy as np
import pytest

from paperkit.core.io import write_array
from paperkit.core.tables import read_table, write_table
from paperkit.methods.conformal import combine


def test_combine_matches_library(pk, tmp_path):
    rng = np.random.default_rng(0)
    p = (1 + rng.integers(0, 20, (30, 5))) / 21
    write_array(tmp_path / "p.npy", p)
    r = pk("conformal-combine", "--pvalues", tmp_path / "p.npy", "--alpha", "0.1", "--combiner", "mean,e,u,eu,min",
           "--seed", "5", "-o", tmp_path / "c.csv")
    assert r.exit_code == 0, r.stderr
    t = read_table(tmp_path / "c.csv")
    u = np.random.default_rng(5).random(30)
    for name in ("mean", "e", "u", "eu", "min"):
        sel = t.column("combiner") == name
        assert np.allclose(t.column("value")[sel], combine(p, name, u))
    e = t.column("combiner") == "e"
    assert np.array_equal(t.column("keep")[e] == "true", combine(p, "e") > 0.1 + 1e-12)
    assert (tmp_path / "c.csv.manifest.json").exists()


def test_combine_reads_tables_and_writes_stdout(pk, tmp_path):
    write_table(tmp_path / "p.csv", {"f1": [0.5, 0.05], "f2": [0.3, 0.1], "f3": [0.9, 0.02]})
    r = pk("conformal-combine", "--pvalues", tmp_path / "p.csv", "--combiner", "e")
    assert r.exit_code == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["keep"] for x in rows] == [True, False]
    assert rows[1]["value"] == pytest.approx(min(0.05, 0.075, 0.17 / 3))


@pytest.mark.parametrize("value,code,needle", [
    (1.5, 3, "outside (0, 1]"), (0.0, 3, "outside (0, 1]"), (np.nan, 3, "outside (0, 1]")])
def test_combine_bad_values(pk, tmp_path, value, code, needle):
    p = np.full((4, 3), 0.5)
    p[2, 1] = value
    write_array(tmp_path / "p.npy", p)
    r = pk("conformal-combine", "--pvalues", tmp_path / "p.npy", "-o", tmp_path / "o.csv")
    assert r.exit_code == code and needle in r.stderr and "row 3, column 2" in r.stderr
    assert not (tmp_path / "o.csv").exists()


def test_combine_bad_options(pk, tmp_path):
    write_array(tmp_path / "p.npy", np.full((2, 3), 0.5))
    r = pk("conformal-combine", "--pvalues", tmp_path / "p.npy", "--combiner", "median")
    assert r.exit_code == 2 and "unknown combiner 'median'" in r.stderr
    r = pk("conformal-combine", "--pvalues", tmp_path / "p.npy", "--alpha", "0.6")
    assert r.exit_code == 2 and "alpha" in r.stderr
