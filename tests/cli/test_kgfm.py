"""kgfm-* commands: the gen -> lift -> wl -> motif -> eval pipeline, same seed same bytes, bad input."""

import json

import pytest

from paperkit.methods.kgfm.data import Graph
from paperkit.methods.kgfm.lift import star_size

GOOD = "a\tr\tb\nb\ts\tc\nc\tr\ta\na\ts\tc\n"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    from paperkit.methods.kgfm.data import write_triples
    from paperkit.methods.kgfm.generators import rules

    d = tmp_path_factory.mktemp("kgfm")
    gen = rules(0, entities=100, types=8, relations=10, n_rules=3)
    for name, rows in gen.splits.items():
        write_triples(d / f"{name}.tsv", rows)
    return d


def test_gen_lift_wl_pipeline_and_same_bytes(pk, tmp_path):
    for name in ("a", "b"):
        r = pk("kgfm-gen", "--kind", "connecthub", "--k", "2", "--graphs", "3", "--run-dir", tmp_path / name, "-q")
        assert r.exit_code == 0, r.stderr
    for f in ("train.tsv", "test.tsv", "labels.csv", "meta.json"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()
    graph = tmp_path / "a" / "train.tsv"
    r = pk("kgfm-lift", "--graph", graph, "--motifs", "f3,star3", "-o", tmp_path / "h.csv")
    assert r.exit_code == 0, r.stderr
    assert "star3" in r.stderr and "tfh" in r.stderr
    header = (tmp_path / "h.csv").read_text().splitlines()[0]
    assert header == "family,motif,r0,r1,r2,weight"
    r = pk("kgfm-wl", "--graph", graph, "--motifs", "f2,star3", "--query", "g0:r0", "--source", "g0:u",
           "-o", tmp_path / "c.csv")
    assert r.exit_code == 0, r.stderr
    rows = (tmp_path / "c.csv").read_text().splitlines()
    assert rows[0] == "family,kind,name,color" and any(",link," in x for x in rows)


def test_gen_rules_writes_zero_shot_splits(pk, tmp_path):
    r = pk("kgfm-gen", "--kind", "rules", "--entities", "100", "--types", "8", "--relations", "10", "--rules", "3",
           "--run-dir", tmp_path / "r", "-q")
    assert r.exit_code == 0, r.stderr
    for f in ("train", "train_queries", "valid", "test_graph", "test"):
        assert (tmp_path / "r" / f"{f}.tsv").stat().st_size > 0, f
    assert (tmp_path / "r" / "labels.csv").read_text().splitlines()[0] == \
        "graph,relation,rule,head_type,tail_type,facts"
    r = pk("kgfm-gen", "--kind", "rules", "--entities", "20", "--types", "3", "--relations", "2", "--rules", "9",
           "--run-dir", tmp_path / "bad")
    _one_line(r, 2)
    assert "--rules" in r.stderr


def test_motif_train_eval_and_refusals(pk, data, tmp_path):
    run = tmp_path / "run"
    r = pk("kgfm-motif", "--train", data / "train.tsv", "--train-queries", data / "train_queries.tsv", "--valid",
           data / "valid.tsv", "--motifs", "f2", "--dim", "8",
           "--layers", "2", "--epochs", "1", "--neg", "8", "--batch-size", "64", "--run-dir", run, "-q")
    assert r.exit_code == 0, r.stderr
    line = json.loads(r.stdout)
    assert 0 < line["valid"]["mrr"] <= 1
    for f in ("model.pt", "metrics.json", "curve.csv", "curves.png", "rel_sim.png", "manifest.json"):
        assert (run / f).is_file(), f
    r = pk("kgfm-eval", "--model", run / "model.pt", "--graph", data / "test_graph.tsv", "--queries",
           data / "test.tsv", "-q")
    assert r.exit_code == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["mode"] == "zero-shot" and res["queries"] == 2 * res["tail"]["queries"]
    _refusals(pk, run, data, tmp_path)


def _one_line(r, code):
    assert r.exit_code == code, f"exit {r.exit_code}: {r.stderr}"
    assert r.stderr.count("\n") == 1 and ": error: " in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "bug in paperkit" not in r.stderr


@pytest.fixture(scope="module")
def bad(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    files = {"two.tsv": "a\tr\n", "empty.tsv": "", "latin1.tsv": "a\tr\t\xe9\n".encode("latin-1"), "good.tsv": GOOD,
             "newrel.tsv": "a\tz\tb\n", "unseen.tsv": "a\tr\tb\n", "notpt.pt": b"\x00garbage"}
    for name, data in files.items():
        (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    return d


@pytest.mark.parametrize("kind,needle", [("two.tsv", "line 1"), ("empty.tsv", "empty graph"),
                                         ("latin1.tsv", "UTF-8"), ("missing.tsv", "missing.tsv")])
def test_bad_graph_files(pk, bad, tmp_path, kind, needle):
    for cmd in (("kgfm-lift", "--graph", bad / kind), ("kgfm-motif", "--train", bad / kind, "--run-dir",
                                                       tmp_path / "run")):
        r = pk(*cmd)
        _one_line(r, 3)
        assert needle in r.stderr
        assert not (tmp_path / "run").exists()


def test_bad_options_and_inputs(pk, bad, data, tmp_path):
    run = tmp_path / "run"
    g = bad / "good.tsv"
    _one_line(pk("kgfm-lift", "--graph", g, "--motifs", "f9"), 2)
    _one_line(r := pk("kgfm-lift", "--graph", data / "train.tsv", "--motifs", "star5", "--max-hyperedges", "100"), 2)
    size = star_size(Graph.from_triples(*_encoded(data / "train.tsv")), 5)
    assert f"would enumerate {size} hyperedges" in r.stderr and f"pass --max-hyperedges {size}" in r.stderr
    _one_line(pk("kgfm-motif", "--train", g, "--neg", "0", "--run-dir", run), 2)
    _one_line(pk("kgfm-motif", "--train", g, "--motifs", "bogus", "--run-dir", run), 2)
    r = pk("kgfm-motif", "--train", g, "--train-queries", bad / "newrel.tsv", "--run-dir", run)
    _one_line(r, 3)
    assert "newrel.tsv" in r.stderr and not run.exists()
    _one_line(pk("kgfm-motif", "--init", bad / "notpt.pt", "--train", g, "--run-dir", tmp_path / "r2"), 3)
    assert not (tmp_path / "r2").exists()


def _encoded(path):
    from paperkit.methods.kgfm.data import build_vocab, encode, read_triples

    rows = read_triples(path)
    v = build_vocab(rows)
    return encode(rows, v), v.n_entities, v.n_relations


def _refusals(pk, run, data, tmp_path):
    # 's' has edges in the graph, 't' has none once only the query file names it
    (tmp_path / "g.tsv").write_text("a\ts\tb\nb\ts\tc\nc\tt\td\n")
    (tmp_path / "q.tsv").write_text("a\ts\tc\n")
    ok = pk("kgfm-eval", "--model", run / "model.pt", "--graph", tmp_path / "g.tsv", "--queries", tmp_path / "q.tsv",
            "-q")
    assert ok.exit_code == 0, ok.stderr
    (tmp_path / "g2.tsv").write_text("a\ts\tb\nb\ts\tc\n")
    (tmp_path / "q2.tsv").write_text("a\tt\tc\n")
    r = pk("kgfm-eval", "--model", run / "model.pt", "--graph", tmp_path / "g2.tsv", "--queries", tmp_path / "q2.tsv")
    _one_line(r, 3)
    r = pk("kgfm-motif", "--train", data / "train.tsv", "--init", run / "model.pt", "--dim", "16",
           "--run-dir", tmp_path / "ft")
    _one_line(r, 3)
    assert "dimension 8" in r.stderr and not (tmp_path / "ft").exists()
    _one_line(pk("kgfm-eval", "--model", run / "model.pt", "--graph", tmp_path / "g.tsv", "--queries",
                 tmp_path / "q.tsv", "--neg", "0"), 2)


_TINY: list = []


@pytest.fixture
def tiny(pk, data, tmp_path_factory):
    """One tiny f2 model for the module (pk is function-scoped)."""
    if not _TINY:
        run = tmp_path_factory.mktemp("tiny") / "run"
        r = pk("kgfm-motif", "--train", data / "train.tsv", "--motifs", "f2", "--dim", "4", "--layers", "1",
               "--epochs", "1", "--neg", "2", "--batch-size", "64", "--device", "cpu", "--run-dir", run, "-q")
        assert r.exit_code == 0, r.stderr
        _TINY.append(run / "model.pt")
    return _TINY[0]


def _edited(src, dst, **edits):
    import torch

    ck = torch.load(src, weights_only=True)
    for k, v in edits.items():
        ck[k] = v(ck) if callable(v) else v
    torch.save(ck, dst)
    return dst


def test_nan_weights_and_a_diverging_lr_refused(pk, tiny, data, tmp_path):
    """NaN weights scored every entity NaN, which ranked as MRR 1.0 (exit 0); --lr 1e30 trained on a NaN loss
    and reported valid MRR 1.0."""
    nan = _edited(tiny, tmp_path / "nan.pt", state_dict=lambda ck: {k: v * float("nan") for k, v in
                                                                     ck["state_dict"].items()})
    r = pk("kgfm-eval", "--model", nan, "--graph", data / "test_graph.tsv", "--queries", data / "test.tsv",
           "--device", "cpu")
    _one_line(r, 3)
    assert "nan.pt" in r.stderr and "NaN" in r.stderr
    r = pk("kgfm-motif", "--train", data / "train.tsv", "--valid", data / "valid.tsv", "--motifs", "f2", "--dim", "4",
           "--layers", "1", "--epochs", "1", "--lr", "1e30", "--run-dir", tmp_path / "run")
    _one_line(r, 2)
    assert "--lr" in r.stderr and not (tmp_path / "run").exists()


@pytest.mark.parametrize("config, words", [
    (lambda c: {k: v for k, v in c.items() if k != "family"}, "config.family is missing"),
    (lambda c: dict(c, dim=-1), "config.dim"),
    (lambda c: [1], "'config' is a list"),
    (lambda c: dict(c, dropout=5.0), "config.dropout"),
    (lambda c: dict(c, family="f9"), "config.family is 'f9'"),
    (lambda c: dict(c, layers=2), "does not fit"),
])
def test_corrupt_checkpoint_config_refused(pk, tiny, data, tmp_path, config, words):
    """These were exit 70 (KeyError, RuntimeError, TypeError, ValueError), or exit 2 naming --motifs, which
    kgfm-eval does not have (the pk fixture checks every option an error names)."""
    bad = _edited(tiny, tmp_path / "bad.pt", config=lambda ck: config(ck["config"]))
    r = pk("kgfm-eval", "--model", bad, "--graph", data / "test_graph.tsv", "--queries", data / "test.tsv",
           "--device", "cpu")
    _one_line(r, 3)
    assert "bad.pt" in r.stderr and words in r.stderr


def test_init_of_another_family_refused_before_the_run_dir(pk, tiny, data, tmp_path):
    r = pk("kgfm-motif", "--train", data / "train.tsv", "--motifs", "f3", "--dim", "4", "--layers", "1",
           "--init", tiny, "--run-dir", tmp_path / "run")
    _one_line(r, 3)
    assert "does not fit" in r.stderr and not (tmp_path / "run").exists()


def test_path_and_binary_lifts_bounded_by_max_hyperedges(pk, tmp_path):
    """A hub with 12 relations in and 12 out: f3 holds thousands of hyperedges, and --max-hyperedges (star lifts
    only) let them through."""
    hub = tmp_path / "hub.tsv"
    hub.write_text("".join(f"a{i}\tr{i}\thub\nhub\tr{i}\tb{i}\n" for i in range(12)))
    for cmd in (("kgfm-lift", "--graph", hub, "--motifs", "f3", "-o", tmp_path / "h.csv"),
                ("kgfm-wl", "--graph", hub, "--motifs", "f3", "-o", tmp_path / "c.csv"),
                ("kgfm-motif", "--train", hub, "--motifs", "f3", "--run-dir", tmp_path / "run")):
        r = pk(*cmd, "--max-hyperedges", "1000")
        _one_line(r, 2)
        assert "--max-hyperedges" in r.stderr and "f3" in r.stderr
    assert not any((tmp_path / f).exists() for f in ("h.csv", "c.csv", "run"))
    assert pk("kgfm-lift", "--graph", hub, "--motifs", "f2", "--max-hyperedges", "2000", "-o", tmp_path / "ok.csv",
              "-q").exit_code == 0


def test_wl_rounds_bounded(pk, tmp_path):
    (tmp_path / "g.tsv").write_text(GOOD)
    _one_line(r := pk("kgfm-wl", "--graph", tmp_path / "g.tsv", "--rounds", "1001", "-o", tmp_path / "c.csv"), 2)
    assert "--rounds" in r.stderr and not (tmp_path / "c.csv").exists()


def test_labels_with_ranking_files_or_unread_test_rows_refused(pk, tmp_path):
    """--labels returned early: the labels' test rows (without --test), --valid and --train-queries were never
    read, and the run reported train accuracy only."""
    assert pk("kgfm-gen", "--kind", "connecthub", "--k", "2", "--graphs", "2", "--run-dir", tmp_path / "ch",
              "-q").exit_code == 0
    ch = tmp_path / "ch"
    base = ("kgfm-motif", "--train", ch / "train.tsv", "--labels", ch / "labels.csv", "--motifs", "f2", "--dim", "4",
            "--layers", "1", "--epochs", "1", "--run-dir", tmp_path / "run")
    for extra, words in (((), "--test"), (("--test", ch / "test.tsv", "--valid", ch / "test.tsv"), "--valid"),
                         (("--test", ch / "test.tsv", "--train-queries", ch / "train.tsv"), "--train-queries")):
        r = pk(*base, *extra)
        _one_line(r, 2)
        assert words in r.stderr and not (tmp_path / "run").exists()
