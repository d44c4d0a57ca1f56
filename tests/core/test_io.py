"""Round trips for every format, atomic writes, and the errors bad files give."""

import gzip
import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paperkit.core import io, plots, tables
from paperkit.core.errors import InputError, UsageError

names = st.text(alphabet=st.characters(whitelist_categories=("L", "N"), whitelist_characters="_ -"),
                min_size=1, max_size=8).map(str.strip).filter(bool)
floats = st.floats(allow_nan=False, allow_infinity=False, width=64)
texts = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=10)


@st.composite
def table_data(draw):
    cols = draw(st.lists(names, min_size=1, max_size=4, unique=True))
    n = draw(st.integers(0, 6))
    data = {}
    for c in cols:
        if draw(st.booleans()):
            data[c] = draw(st.lists(floats, min_size=n, max_size=n))
        else:
            # text columns: at least one value that is not a number, so the column stays text
            vals = draw(st.lists(texts, min_size=n, max_size=n))
            if n:
                vals[0] = "x" + vals[0]
            data[c] = vals
    return data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=table_data(), fmt=st.sampled_from(["csv", "tsv", "jsonl"]))
def test_table_round_trip(tmp_path, data, fmt):
    path = tmp_path / f"t.{fmt}"
    tables.write_table(path, data)
    back = tables.read_table(path)
    n = len(next(iter(data.values())))
    if fmt == "jsonl" and n == 0:
        assert back.columns == []  # JSON lines have no header: no rows, no columns
        return
    assert back.columns == list(data)
    assert len(back) == len(next(iter(data.values())))
    for c, values in data.items():
        got = back.column(c)
        if values and isinstance(values[0], float):
            np.testing.assert_array_equal(got, np.asarray(values, dtype=float))  # exact: repr round-trips
        elif values:
            if fmt == "jsonl":
                assert list(got) == values
            else:  # CSV keeps text, except that surrounding whitespace is data too
                assert [str(v) for v in got] == values


def test_jsonl_round_trip_and_nonfinite(tmp_path):
    rows = [{"a": 1, "b": [1.5, 2.0], "c": None}, {"a": 2, "b": [], "c": "x", "d": float("nan")}]
    io.write_jsonl(tmp_path / "r.jsonl", rows)
    back = io.read_jsonl(tmp_path / "r.jsonl")
    assert back[0] == rows[0]
    assert back[1]["d"] is None  # non-finite floats become null (valid JSON)


def test_json_yaml_round_trip(tmp_path):
    obj = {"alpha": 0.1, "folds": 10, "methods": ["a", "b"], "nested": {"x": np.float64(2.5), "y": np.arange(3)}}
    io.write_json(tmp_path / "o.json", obj)
    io.write_yaml(tmp_path / "o.yaml", obj)
    expected = {"alpha": 0.1, "folds": 10, "methods": ["a", "b"], "nested": {"x": 2.5, "y": [0, 1, 2]}}
    assert io.read_json(tmp_path / "o.json") == expected
    assert io.read_yaml(tmp_path / "o.yaml") == expected


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8, np.bool_])
def test_npy_npz_round_trip_keep_dtype(tmp_path, dtype):
    a = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    io.write_array(tmp_path / "a.npy", a)
    b = io.read_array(tmp_path / "a.npy")
    assert b.dtype == a.dtype and np.array_equal(a, b)
    io.write_arrays(tmp_path / "a.npz", {"x": a, "y": a.T})
    d = io.read_arrays(tmp_path / "a.npz")
    assert set(d) == {"x", "y"} and d["x"].dtype == a.dtype and np.array_equal(d["y"], a.T)


def test_npz_bytes_are_deterministic(tmp_path):
    arrays = {"x": np.linspace(0, 1, 50), "y": np.arange(7)}
    io.write_arrays(tmp_path / "1.npz", arrays)
    os.utime(tmp_path, (0, 0))
    io.write_arrays(tmp_path / "2.npz", arrays)
    assert (tmp_path / "1.npz").read_bytes() == (tmp_path / "2.npz").read_bytes()


def test_gzip_text_round_trip_and_determinism(tmp_path):
    data = {"x": [1.0, 2.0], "y": ["a", "b"]}
    tables.write_table(tmp_path / "a.tsv.gz", data)
    tables.write_table(tmp_path / "b.tsv.gz", data)
    assert (tmp_path / "a.tsv.gz").read_bytes() == (tmp_path / "b.tsv.gz").read_bytes()
    assert gzip.decompress((tmp_path / "a.tsv.gz").read_bytes()).decode() == "x\ty\n1.0\ta\n2.0\tb\n"
    t = tables.read_table(tmp_path / "a.tsv.gz")
    assert t.columns == ["x", "y"] and list(t.column("y")) == ["a", "b"]


class _NotWeights:
    """An arbitrary object: a weights-only load must refuse to unpickle it."""


def test_torch_round_trip_weights_only(tmp_path):
    torch = pytest.importorskip("torch")
    state = {"w": torch.arange(6.0).reshape(2, 3), "step": 3}
    io.save_torch(tmp_path / "c.pt", state)
    back = io.load_torch(tmp_path / "c.pt")
    assert back["step"] == 3 and torch.equal(back["w"], state["w"])

    torch.save({"obj": _NotWeights()}, tmp_path / "evil.pt")
    with pytest.raises(InputError, match="weights-only"):
        io.load_torch(tmp_path / "evil.pt")


def test_png(tmp_path):
    fig, ax = plots.new_figure()
    ax.plot([0, 1], [0, 1])
    plots.save_figure(fig, tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_atomic_write_leaves_no_partial_file(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), io.atomic_write(target) as f:
        f.write("half of a new file")
        raise RuntimeError("writer died")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]  # no temp file left behind

    fresh = tmp_path / "sub" / "new.json"
    with pytest.raises(KeyboardInterrupt), io.atomic_write(fresh) as f:
        f.write("{")
        raise KeyboardInterrupt
    assert not fresh.exists() and list((tmp_path / "sub").iterdir()) == []


def test_atomic_write_keeps_normal_permissions(tmp_path):
    io.write_json(tmp_path / "p.json", {"a": 1})
    mode = (tmp_path / "p.json").stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask


def test_stdout_and_stdin(capsys, monkeypatch):
    tables.write_table("-", {"a": [1.0], "b": ["x"]})
    assert capsys.readouterr().out == '{"a": 1.0, "b": "x"}\n'
    import sys
    from io import StringIO

    monkeypatch.setattr(sys, "stdin", StringIO("a,b\n1,2\n3,4\n"))
    t = tables.read_table("-")
    assert t.numeric().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    monkeypatch.setattr(sys, "stdin", StringIO('{"a": 1}\n{"a": 2}\n'))
    assert tables.read_table("-").column("a").tolist() == [1.0, 2.0]


def test_binary_refused_on_a_terminal(monkeypatch):
    import sys

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    with pytest.raises(UsageError, match="binary"):
        io.write_array("-", np.zeros(3))


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "empty file"),
        ("a,b\n1,2,3\n", "line 2 has 3 fields"),
        ("a,a\n1,2\n", "duplicate column"),
    ],
)
def test_bad_tables(tmp_path, content, message):
    p = tmp_path / "bad.csv"
    p.write_text(content)
    with pytest.raises(InputError, match=message):
        tables.read_table(p)


def test_headerless_tables(tmp_path):
    import gzip

    p = tmp_path / "m.csv.gz"
    with gzip.open(p, "wt") as f:
        f.write("\n0.5,0.5\n0.5,0.5\n")  # a bare matrix: duplicate values are not column names
    t = tables.read_table(p, header=False)
    assert t.columns == ["1", "2"] and t.numeric().tolist() == [[0.5, 0.5], [0.5, 0.5]]
    q = tmp_path / "r.tsv"
    q.write_text("1\t2\n3\n")
    with pytest.raises(InputError, match="line 2 has 1 fields; line 1 has 2"):
        tables.read_table(q, header=False)
    q.write_text("")
    with pytest.raises(InputError, match="empty file; expected at least one row"):
        tables.read_table(q, header=False)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        tables.read_table(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="is a directory"):
        io.read_json(tmp_path)


def test_numeric_errors_name_column_and_rows(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("x,y,z\n1,2,a\n2,,b\n3,nan,c\n4,inf,d\n")
    t = tables.read_table(p)
    with pytest.raises(InputError, match=r"column 'y' has 2 NaN and 1 infinite value\(s\) \(rows 1, 2, 3, 0-based\)"):
        t.numeric(["x", "y"])
    with pytest.raises(InputError, match=r"column 'z' has 4 non-numeric value\(s\) \(data rows 0, 1, 2, 3, 0-based"):
        t.numeric(["z"])
    with pytest.raises(InputError, match="no column 'w'"):
        t.column("w")
    assert math.isnan(t.numeric(["y"], finite=False)[1, 0])


def test_invalid_json_yaml_npy(tmp_path):
    (tmp_path / "b.json").write_text('{"a": 1,}')
    with pytest.raises(InputError, match="invalid JSON at line 1"):
        io.read_json(tmp_path / "b.json")
    (tmp_path / "b.yaml").write_text("a: [1, 2\n")
    with pytest.raises(InputError, match="invalid YAML at line"):
        io.read_yaml(tmp_path / "b.yaml")
    (tmp_path / "b.npy").write_bytes(b"not numpy")
    with pytest.raises(InputError, match="b.npy"):
        io.read_array(tmp_path / "b.npy")
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(InputError, match="Python objects"):
        io.read_array(tmp_path / "obj.npy")


def test_non_numpy_files_are_named_for_what_they_are(tmp_path):
    # np.load takes any bytes that are not NumPy's for a pickle; a CSV saved as .npy was once called "pickled"
    (tmp_path / "t.npy").write_text("x,y\n1,2\n")
    with pytest.raises(InputError, match=r"t.npy: not a NumPy .npy/.npz file \(it holds text, looks like a CSV/TSV table: 'x,y'\)$"):
        io.read_array(tmp_path / "t.npy")
    (tmp_path / "e.npz").write_bytes(b"")
    with pytest.raises(InputError, match="e.npz: not a NumPy .npy/.npz file \\(the file is empty"):
        io.read_arrays(tmp_path / "e.npz")
    import pickle
    (tmp_path / "p.npy").write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(InputError, match="looks like a Python pickle, which paperkit never loads"):
        io.read_array(tmp_path / "p.npy")


def test_format_detection():
    assert io.detect_format("x.CSV") == "csv"
    assert io.detect_format("x.tsv.gz") == "tsv"
    assert io.detect_format("-", default="jsonl") == "jsonl"
    assert io.detect_format("x.bin", "npy") == "npy"
    with pytest.raises(UsageError, match="cannot tell the format"):
        io.detect_format("x.bin")
    with pytest.raises(UsageError, match="unknown format"):
        io.detect_format("x.csv", "xlsx")


def test_a_utf8_byte_order_mark_is_not_part_of_the_first_column_name(tmp_path):
    """Excel's "CSV UTF-8" starts with a BOM: the first column was read as '\\ufeffa', so a test file without
    the BOM lacked column 'a' (conformal-cv) or the name reached the outputs (sr-apo-search)."""
    from paperkit.core.tables import read_table

    plain, bom = tmp_path / "plain.csv", tmp_path / "bom.csv"
    plain.write_text("a,b\n1,2\n", encoding="utf-8")
    bom.write_text("\ufeffa,b\n1,2\n", encoding="utf-8")
    assert read_table(bom).columns == read_table(plain).columns == ["a", "b"]
    assert read_table(bom, header=False).column("1").tolist() == read_table(plain, header=False).column("1").tolist()


def test_a_truncated_or_corrupt_gzip_table_is_an_input_error(tmp_path):
    """A truncated .gz ends in EOFError, which click reports as Ctrl-D (exit 130, 'interrupted')."""
    whole = gzip.compress(b"x,y\n" + b"".join(b"%d,%d\n" % (i, 2 * i) for i in range(2000)))
    (tmp_path / "cut.csv.gz").write_bytes(whole[:40])
    with pytest.raises(InputError, match="cut.csv.gz: not a valid gzip file"):
        tables.read_table(tmp_path / "cut.csv.gz")
    (tmp_path / "bad.csv.gz").write_bytes(whole[:12] + b"\xff" * 50 + whole[62:])
    with pytest.raises(InputError, match="bad.csv.gz: not a valid gzip file"):
        tables.read_table(tmp_path / "bad.csv.gz")


def test_a_directory_where_a_table_belongs_is_named_as_such(tmp_path):
    (tmp_path / "adir").mkdir()
    with pytest.raises(InputError, match="adir: is a directory; expected a file"):
        tables.read_table(tmp_path / "adir")


def test_a_text_file_given_as_a_checkpoint_is_not_called_hostile(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "m.pt").write_text('{"not": "a model"}\n')
    with pytest.raises(InputError, match=r"m.pt: not a PyTorch checkpoint \(it holds text: '\{\"not\""):
        io.load_torch(tmp_path / "m.pt")
    (tmp_path / "e.pt").write_bytes(b"")
    with pytest.raises(InputError, match="e.pt: not a PyTorch checkpoint \\(the file is empty"):
        io.load_torch(tmp_path / "e.pt")


def test_an_output_that_cannot_be_created_is_a_usage_error(tmp_path):
    """Under a regular file, atomic_write's mkdir raised FileExistsError: exit 70 (found by an audit)."""
    (tmp_path / "f.npz").write_bytes(b"x")
    with pytest.raises(UsageError, match=r"f.npz/sub.csv: cannot write there \(.*f.npz is a file"):
        io.check_writable(tmp_path / "f.npz" / "sub.csv")
    with pytest.raises(UsageError, match="cannot write there"), io.atomic_write(tmp_path / "f.npz" / "a" / "b.csv"):
        pass
    io.check_writable(tmp_path / "new" / "deeper" / "ok.csv")   # missing folders are created later
