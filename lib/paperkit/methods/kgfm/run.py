"""Orchestration of the kgfm-* commands: settings (the single source of defaults), prepare (read and validate
every input before a run dir exists), execute (long parts through ``run.cached``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from paperkit.core import io, tables
from paperkit.core.errors import InputError, UsageError
from paperkit.core.progress import progress as default_progress
from paperkit.methods.kgfm import generators
from paperkit.methods.kgfm.data import (
    Graph,
    Vocab,
    build_vocab,
    check_conditionable,
    encode,
    filter_sets,
    read_triples,
)
from paperkit.methods.kgfm.lift import Lift, check_lift_size, hyperedge_rows, lift, parse_family
from paperkit.methods.kgfm.wl import entity_colors, relation_colors, separated_pairs

KINDS = ("connecthub", "search", "rules")
MAX_LR = 10.0  # AdamW moves each weight by about lr per step: far above this the loss can only diverge
MAX_ROUNDS = 1000  # kgfm-wl: a partition of n items is stable after at most n rounds


# ------------------------------------------------------------------------------------------- gen
@dataclass(frozen=True)
class GenSettings:
    kind: str = "connecthub"
    k: int = 2
    graphs: int = 5
    entities: int = 400
    types: int = 10
    relations: int = 16
    rules: int = 6
    seed: int = 0


def execute_gen(s: GenSettings) -> generators.Generated:
    if s.kind == "connecthub":
        if s.graphs < 2:
            raise UsageError("--graphs must be at least 2 (ConnectHub splits 70/30 by graph)")
        return generators.connecthub(s.k, s.graphs, s.seed)
    if s.kind == "rules":
        return generators.rules(s.seed, entities=s.entities, types=s.types, relations=s.relations, n_rules=s.rules)
    found = generators.search_f2_f3(s.seed)
    if found is None:
        raise UsageError(f"--kind search found no F2-tied, F3-separated pair with --seed {s.seed}; try another seed")
    return found


# ------------------------------------------------------------------------------------------ lift
@dataclass(frozen=True)
class LiftSettings:
    graph: str = ""
    motifs: tuple[str, ...] = ("f2", "f3")
    max_hyperedges: int = 5_000_000


@dataclass
class LoadedGraph:
    path: str
    vocab: Vocab
    triples: np.ndarray
    graph: Graph


def load_graph(path: str | os.PathLike) -> LoadedGraph:
    rows = read_triples(path)
    vocab = build_vocab(rows)
    tr = encode(rows, vocab, io.display_name(path))
    return LoadedGraph(str(path), vocab, tr, Graph.from_triples(tr, vocab.n_entities, vocab.n_relations))


def check_families(motifs: tuple[str, ...]) -> None:
    for m in motifs:
        parse_family(m)


def run_lift(s: LiftSettings) -> tuple[LoadedGraph, dict[str, Lift]]:
    check_families(s.motifs)
    lg = load_graph(s.graph)
    return lg, {m: lift(lg.graph, m, max_hyperedges=s.max_hyperedges) for m in s.motifs}


def lift_rows(lg: LoadedGraph, lifts: dict[str, Lift]) -> tuple[list[dict], list[dict]]:
    """hyperedges.csv rows (family first) and count rows per (family, motif)."""
    rows, counts = [], []
    for fam, lf in lifts.items():
        rows += [{"family": fam, **r} for r in hyperedge_rows(lf, lg.vocab.relations)]
        counts += [{"family": fam, "motif": m, "hyperedges": n} for m, n in lf.counts().items()]
    width = max((len([k for k in r if k.startswith("r") and k[1:].isdigit()]) for r in rows), default=2)
    for r in rows:
        for i in range(width):
            r.setdefault(f"r{i}", "")
        r["weight"] = r.pop("weight")
    return rows, counts


# -------------------------------------------------------------------------------------------- wl
@dataclass(frozen=True)
class WlSettings:
    graph: str = ""
    motifs: tuple[str, ...] = ("f2", "f3")
    query: str | None = None
    source: str | None = None
    rounds: int | None = None
    max_hyperedges: int = 5_000_000


def run_wl(s: WlSettings) -> dict[str, Any]:
    """Relation colours per family (and link colours from --source); which pairs each family separates."""
    if s.rounds is not None and not 1 <= s.rounds <= MAX_ROUNDS:
        raise UsageError(f"--rounds {s.rounds}: expected 1..{MAX_ROUNDS} (leave it out to refine until the colour "
                         "partition is stable)")
    lg, lifts = run_lift(LiftSettings(s.graph, s.motifs, s.max_hyperedges))
    v = lg.vocab
    names = v.relations + [f"{n}^-1" for n in v.relations]
    q = 0 if s.query is None else _index(names, s.query, "--query", "relation", lg.path)
    u = None if s.source is None else _index(v.entities, s.source, "--source", "entity", lg.path)
    rows, summary = [], []
    for fam, lf in lifts.items():
        rc = relation_colors(lf, q, s.rounds)
        sep, tied = separated_pairs(rc, [r for r in range(lg.graph.n_rel2) if r != q])
        rows += [{"family": fam, "kind": "relation", "name": names[r], "color": f"{int(c):016x}"} for r, c in
                 enumerate(rc)]
        item = {"family": fam, "relation_classes": len(set(rc.tolist())), "relations_tied": len(tied),
                "tied": [f"{names[a]}={names[b]}" for a, b in tied][:20]}
        if u is not None:
            ec = entity_colors(lg.graph, rc, u, s.rounds)
            rows += [{"family": fam, "kind": "link", "name": f"({v.entities[u]}, {names[q]}, {e})",
                      "color": f"{int(c):016x}"} for e, c in zip(v.entities, ec.tolist(), strict=True)]
            item["link_classes"] = len(set(ec.tolist()))
        summary.append(item)
    return {"query": names[q], "source": None if u is None else v.entities[u], "rows": rows, "summary": summary}


def _index(names: list[str], name: str, flag: str, what: str, path: str) -> int:
    if name not in names:
        raise UsageError(f"{flag} '{name}': no {what} of that name in {path}")
    return names.index(name)


# ----------------------------------------------------------------------------------------- train
@dataclass(frozen=True)
class MotifSettings:
    train: str = ""
    train_queries: str | None = None
    valid: str | None = None
    test: str | None = None
    labels: str | None = None
    motifs: str = "f3"
    dim: int = 64
    layers: int = 6
    dropout: float = 0.2
    relation_norm: bool = False
    neg: int = 64
    epochs: int = 10
    batch_size: int = 16
    lr: float = 5e-4
    temperature: float = 1.0
    stop_accuracy: float = 1.0
    init: str | None = None
    max_hyperedges: int = 5_000_000
    seed: int = 0
    device: str = "auto"


@dataclass
class MotifInputs:
    settings: MotifSettings
    train: LoadedGraph
    queries: np.ndarray  # the training queries (--train-queries, else every triple of --train)
    valid: np.ndarray | None
    test: np.ndarray | None
    test_graph: LoadedGraph | None
    links: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    init_state: dict | None = None


def _positive(value: float, flag: str) -> None:
    if not value > 0:
        raise UsageError(f"{flag} must be > 0 (got {value})")


def _check_lr(lr: float) -> None:
    if not 0 < lr <= MAX_LR:
        raise UsageError(f"--lr must be in (0, {MAX_LR:g}] (got {lr})")


_CONFIG_RANGES = {"dim": (1, 1024), "layers": (1, 12)}  # kgfm-motif's --dim and --layers


def _not_checkpoint(path: str, why: str) -> InputError:
    return InputError(f"{path}: not a kgfm-motif checkpoint ({why})")


def load_checkpoint(path: str, dim: int | None = None) -> dict:
    """A model.pt of kgfm-motif, its config checked field by field (the ranges kgfm-motif accepts) and its
    weights finite: NaN weights score every entity NaN, which ranked as perfect."""
    from paperkit.core.validate import check_finite_weights

    io.require_file(path)
    try:
        ck = io.load_torch(path)
    except Exception as e:  # noqa: BLE001 - any unreadable file is the user's input problem
        raise InputError(f"{path}: not a kgfm-motif checkpoint ({type(e).__name__})") from None
    if not isinstance(ck, dict) or "config" not in ck or "state_dict" not in ck:
        raise InputError(f"{path}: not a kgfm-motif checkpoint (no config/state_dict)")
    c = ck["config"]
    if not isinstance(c, dict):
        raise _not_checkpoint(path, f"'config' is a {type(c).__name__}; expected a mapping")
    for key in ("family", "dim", "layers", "dropout"):
        if key not in c:
            raise _not_checkpoint(path, f"config.{key} is missing")
    try:  # parse_family's own error names --motifs, an option of kgfm-motif, not of this file
        known = isinstance(c["family"], str) and bool(parse_family(c["family"]))
    except UsageError:
        known = False
    if not known:
        raise _not_checkpoint(path, f"config.family is {c['family']!r}; expected a motif family (none, h2t, ultra, "
                                    "f2, f3, starK)")
    for key, (low, high) in _CONFIG_RANGES.items():
        if type(c[key]) is not int or not low <= c[key] <= high:
            raise _not_checkpoint(path, f"config.{key} is {c[key]!r}; expected an integer in {low}..{high}")
    d = c["dropout"]
    if isinstance(d, bool) or not isinstance(d, (int, float)) or not 0 <= d < 1:
        raise _not_checkpoint(path, f"config.dropout is {d!r}; expected a number in [0, 1)")
    if not isinstance(c.get("relation_norm", False), bool):
        raise _not_checkpoint(path, f"config.relation_norm is {c['relation_norm']!r}; expected true or false")
    sd = ck["state_dict"]
    if not isinstance(sd, dict) or not all(isinstance(k, str) for k in sd):
        raise _not_checkpoint(path, "'state_dict' is not a mapping of tensor names")
    check_finite_weights(sd, path, "state_dict")
    if dim is not None and c["dim"] != dim:
        raise InputError(f"{path}: checkpoint has dimension {c['dim']}, but --dim is {dim}")
    return ck


def _check_fits(cfg: Any, ck: dict, path: str) -> None:
    """The checkpoint's tensors are those of a model of ``cfg``, by name and shape: checked on the meta device
    (nothing allocated) while reading the inputs, instead of failing in load_state_dict mid-run."""
    import torch

    from paperkit.methods.kgfm.model import MotifModel

    with torch.device("meta"):
        want = {k: tuple(v.shape) for k, v in MotifModel(cfg).state_dict().items()}
    got = {k: tuple(v.shape) if isinstance(v, torch.Tensor) else None for k, v in ck["state_dict"].items()}
    key = next((k for k in sorted(want.keys() | got.keys()) if want.get(k) != got.get(k)), None)
    if key is not None:
        why = ("is missing" if key not in got else "is not in this model" if key not in want
               else f"has shape {list(got[key] or [])}, this model {list(want[key])}")
        raise InputError(f"{path}: checkpoint does not fit this model of motifs {cfg.family} "
                         f"(tensor '{key}' {why})")


def _model_config(s: MotifSettings, init: dict | None) -> Any:
    from paperkit.methods.kgfm.model import ModelConfig

    cfg = ModelConfig(family=s.motifs, dim=s.dim, layers=s.layers, dropout=s.dropout, relation_norm=s.relation_norm)
    if init is not None:
        cfg = replace(cfg, layers=init["config"]["layers"], relation_norm=init["config"].get("relation_norm", False))
    return cfg


def _read_links(path: str, splits: dict[str, LoadedGraph]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    t = tables.read_table(path)
    for col in ("split", "head", "relation", "tail", "label"):
        if not t.has(col):
            raise InputError(f"{path}: missing column '{col}' (expected split, head, relation, tail, label)")
    out = {}
    cols = {c: t.column(c) for c in ("split", "head", "relation", "tail", "label")}
    named = {str(x) for x in cols["split"]}
    if "test" in named and "test" not in splits:  # they were dropped, and only train accuracy reported
        raise UsageError(f"{path} has 'test' rows; give their graph with --test (or drop the rows)")
    if named - {"train", "test"}:
        raise InputError(f"{path}: column 'split' holds {sorted(named - {'train', 'test'})[0]!r}; expected train "
                         "or test")
    for split, lg in splits.items():
        idx = [i for i, s in enumerate(cols["split"]) if str(s) == split]
        if not idx:
            continue
        rows = [(str(cols["head"][i]), str(cols["relation"][i]), str(cols["tail"][i])) for i in idx]
        try:
            y = np.array([float(cols["label"][i]) for i in idx])
        except (TypeError, ValueError):
            y = np.full(len(idx), np.nan)
        if not np.all(np.isin(y, (0.0, 1.0))):
            raise InputError(f"{path}: column 'label' must hold 0 or 1")
        out[split] = (encode(rows, lg.vocab, f"{path} ({split} rows)"), y)
    if "train" not in out:
        raise InputError(f"{path}: no rows with split 'train'")
    return out


def prepare_motif(s: MotifSettings) -> MotifInputs:
    parse_family(s.motifs)
    _positive(s.neg, "--neg")
    _check_lr(s.lr)
    _positive(s.temperature, "--temperature")
    if not 0 <= s.stop_accuracy <= 1:
        raise UsageError(f"--stop-accuracy must be in [0, 1] (got {s.stop_accuracy}); 0 trains every epoch")
    if s.labels and (s.valid or s.train_queries):
        # link classification trains on the labelled links and ranks nothing: these files were never read
        raise UsageError(f"--labels trains a link classifier; {'--valid' if s.valid else '--train-queries'} "
                         "applies to ranking only (leave out --labels, or the ranking files)")
    init = load_checkpoint(s.init, s.dim) if s.init else None
    if init is not None:
        _check_fits(_model_config(s, init), init, s.init)
    tr = load_graph(s.train)
    check_lift_size(tr.graph, s.motifs, s.max_hyperedges, cubes_ok=True)  # the model holds stars as cubes
    if s.labels:
        test_graph = load_graph(s.test) if s.test else None
        if test_graph is not None:
            check_lift_size(test_graph.graph, s.motifs, s.max_hyperedges, cubes_ok=True)
        links = _read_links(s.labels, {"train": tr, **({"test": test_graph} if test_graph else {})})
        return MotifInputs(s, tr, tr.triples, None, None, test_graph, links, init)
    queries, valid, test = (encode(read_triples(p), tr.vocab, p) if p else None
                            for p in (s.train_queries, s.valid, s.test))
    for arr, src in ((queries, s.train_queries), (valid, s.valid), (test, s.test)):
        if arr is not None:
            check_conditionable(arr, tr.graph, tr.vocab, src)
    return MotifInputs(s, tr, tr.triples if queries is None else queries, valid, test, None, {}, init)


@dataclass
class MotifResult:
    checkpoint: dict
    metrics: dict[str, Any]
    curve: list[dict[str, Any]]
    rel_sim: np.ndarray
    relation_names: list[str]


def _model_and_tensors(s: MotifSettings, lg: LoadedGraph, init: dict | None):
    import torch

    from paperkit.core.devices import resolve_device
    from paperkit.methods.kgfm.model import MotifModel
    from paperkit.methods.kgfm.train import GraphTensors

    dev = resolve_device(s.device)
    torch.manual_seed(s.seed)
    model = MotifModel(_model_config(s, init)).to(dev)
    if init is not None:
        _load_state(model, init, s.init or "checkpoint")
    lf = lift(lg.graph, s.motifs, max_hyperedges=s.max_hyperedges, star_cubes_ok=True)
    gt = GraphTensors.build(lg.graph, lf, model.types, dev)
    return model, gt


def _load_state(model: Any, ck: dict, path: str) -> None:
    try:
        model.load_state_dict(ck["state_dict"])
    except RuntimeError as e:
        raise InputError(f"{path}: checkpoint does not fit this model ({str(e).splitlines()[0][:160]})") from None


def relation_similarity(model: Any, gt: Any) -> np.ndarray:
    """Cosine similarity of z_q | q (each relation's representation conditioned on itself)."""
    import torch

    model.eval()
    R = gt.graph.n_relations
    with torch.no_grad():
        q = torch.arange(R, device=gt.edges.device)
        z = model.relations(gt.lift, q, gt.graph.n_rel2)[q, q]
        z = torch.nn.functional.normalize(z, dim=1)
        return (z @ z.T).cpu().numpy()


def execute_motif(inputs: MotifInputs, run: Any, progress: Any = default_progress) -> MotifResult:
    from paperkit.methods.kgfm import train as T

    s = inputs.settings
    model, gt = _model_and_tensors(s, inputs.train, inputs.init_state)
    R = inputs.train.vocab.n_relations
    splits = [x for x in (inputs.train.triples, inputs.queries, inputs.valid, inputs.test) if x is not None]
    filters = filter_sets(*splits, n_relations=R)

    def compute() -> dict:
        curve: list[dict[str, Any]] = []
        with progress(total=s.epochs, desc=f"train {s.motifs}", unit="epoch") as bar:
            if inputs.links:
                def on_epoch(epoch: int, loss: float, accuracy: float) -> None:
                    curve.append({"epoch": epoch, "loss": loss, "train_accuracy": accuracy})
                    bar.update(1)

                T.train_classifier(model, gt, *inputs.links["train"], epochs=s.epochs, batch_size=s.batch_size,
                                   lr=s.lr, seed=s.seed, stop_accuracy=s.stop_accuracy or None, on_epoch=on_epoch)
            else:
                # one optimiser and one negative sampler over all epochs; validation MRR between epochs
                def on_rank_epoch(epoch: int, loss: float) -> None:
                    row: dict[str, Any] = {"epoch": epoch, "loss": loss}
                    if inputs.valid is not None:
                        row["valid_mrr"] = T.evaluate(model, gt, inputs.valid, filters, s.batch_size)["mrr"]
                    curve.append(row)
                    bar.update(1)

                T.train_ranking(model, gt, inputs.queries, filters, epochs=s.epochs, batch_size=s.batch_size,
                                n_neg=s.neg, lr=s.lr, seed=s.seed, temperature=s.temperature,
                                on_epoch=on_rank_epoch)
        return {"checkpoint": model.checkpoint(), "curve": curve}

    out = run.cached("model", compute, fmt="pt")
    _load_state(model, out["checkpoint"], "model checkpoint")
    metrics: dict[str, Any] = {"motifs": s.motifs}
    if inputs.links:
        metrics.update(classification_metrics(model, gt, *inputs.links["train"], "train"))
        if "test" in inputs.links and inputs.test_graph is not None:
            _, gte = _model_and_tensors(s, inputs.test_graph, None)
            metrics.update(classification_metrics(model, gte, *inputs.links["test"], "test"))
    else:
        for name, arr in (("valid", inputs.valid), ("test", inputs.test)):
            if arr is not None:
                res = T.evaluate(model, gt, arr, filters, s.batch_size)
                metrics[name] = {k: v for k, v in res.items() if k != "ranks"}
    return MotifResult(out["checkpoint"], metrics, out["curve"], relation_similarity(model, gt),
                       inputs.train.vocab.relations)


def classification_metrics(model: Any, gt: Any, links: np.ndarray, y: np.ndarray, split: str) -> dict[str, float]:
    from paperkit.methods.kgfm.train import classify

    logits = classify(model, gt, links)
    return {f"{split}_accuracy": float(np.mean((logits > 0) == (y > 0.5))), f"{split}_links": int(len(y))}


# ------------------------------------------------------------------------------------------ eval
@dataclass(frozen=True)
class EvalSettings:
    model: str = ""
    graph: str = ""
    queries: str = ""
    epochs: int = 0
    neg: int = 64
    lr: float = 5e-4
    batch_size: int = 16
    seed: int = 0
    device: str = "auto"


@dataclass
class EvalInputs:
    settings: EvalSettings
    checkpoint: dict
    graph: LoadedGraph
    queries: np.ndarray


def prepare_eval(s: EvalSettings) -> EvalInputs:
    _positive(s.neg, "--neg")
    _check_lr(s.lr)
    ck = load_checkpoint(s.model)
    ms = _eval_motif_settings(s, ck)
    _check_fits(_model_config(ms, ck), ck, s.model)
    lg = load_graph(s.graph)
    try:
        check_lift_size(lg.graph, ms.motifs, ms.max_hyperedges, cubes_ok=True)
    except UsageError:  # kgfm-eval has no --motifs nor --max-hyperedges: the family is the checkpoint's
        raise InputError(f"{s.graph}: the {ms.motifs} lift of this graph (the model's motif family) would hold "
                         f"more than {ms.max_hyperedges} hyperedges") from None
    q = encode(read_triples(s.queries), lg.vocab, s.queries)
    check_conditionable(q, lg.graph, lg.vocab, s.queries)
    return EvalInputs(s, ck, lg, q)


def _eval_motif_settings(s: EvalSettings, ck: dict) -> MotifSettings:
    c = ck["config"]
    return MotifSettings(motifs=c["family"], dim=c["dim"], layers=c["layers"], dropout=float(c["dropout"]),
                         relation_norm=c.get("relation_norm", False), seed=s.seed, device=s.device)


def execute_eval(inputs: EvalInputs, progress: Any = default_progress) -> dict[str, Any]:
    """Zero-shot metrics of a checkpoint on another graph, or after ``epochs`` of fine-tuning on it."""
    from paperkit.methods.kgfm import train as T

    s, ck = inputs.settings, inputs.checkpoint
    c = ck["config"]
    ms = _eval_motif_settings(s, ck)
    model, gt = _model_and_tensors(ms, inputs.graph, ck)
    filters = filter_sets(inputs.graph.triples, inputs.queries, n_relations=inputs.graph.vocab.n_relations)
    if s.epochs:
        T.train_ranking(model, gt, inputs.graph.triples, filter_sets(inputs.graph.triples,
                        n_relations=inputs.graph.vocab.n_relations), epochs=s.epochs, batch_size=s.batch_size,
                        n_neg=s.neg, lr=s.lr, seed=s.seed)
    with progress(total=2 * len(inputs.queries), desc="rank", unit="query") as bar:
        res = T.evaluate(model, gt, inputs.queries, filters, s.batch_size, on_batch=bar.update)
    return {"motifs": c["family"], "mode": "fine-tuned" if s.epochs else "zero-shot", "epochs": s.epochs,
            **{k: v for k, v in res.items() if k != "ranks"}}
