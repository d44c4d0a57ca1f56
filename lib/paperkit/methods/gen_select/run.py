"""Orchestration of the gen-select commands: settings dataclasses (the one source of defaults),
``prepare_*`` (read and check every input before a run dir exists) and ``execute_*`` (stages through
:meth:`paperkit.core.runs.RunDir.cached`, one per learner, so an interrupted run resumes)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from paperkit.core.errors import InputError, UsageError
from paperkit.core.progress import progress as default_progress
from paperkit.methods.gen_select.instances import Instance
from paperkit.methods.gen_select.kernels import Kernel
from paperkit.methods.gen_select.learners import LEARNERS, LearnerSettings
from paperkit.methods.gen_select.simulate import Hyper

SYNTHETIC = ("switch", "null", "text")
MAX_HORIZON = 10**7
LAST = 500  # rounds of the "last-500" OPR and type shares


# ------------------------------------------------------------------------------------ instances
@dataclass(frozen=True)
class InstanceSettings:
    """Where the instance comes from (one of: synthetic, contexts + scores, scores CSV, records)."""

    synthetic: str | None = None
    types: int = 4
    dim: int = 16
    models: int = 3
    prompts: int = 1000
    noise: float = 0.1
    rescale: bool = False
    seed: int = 0


@dataclass(frozen=True)
class Sources:
    contexts: str | None = None
    scores: str | None = None
    scores_csv: str | None = None
    records: str | None = None
    texts: str | None = None
    model: str | None = None       # embedding model folder (default: the MiniLM package)
    cache_dir: str | None = None   # embedding cache (default: the user cache folder)
    no_cache: bool = False


def _embedder(src: Sources) -> Callable[[list[str]], np.ndarray]:
    from paperkit.methods.gen_select.embed import Embedder, default_cache_dir

    cache = None if src.no_cache else (src.cache_dir or default_cache_dir())
    return Embedder(src.model, cache_dir=cache)


def load_instance(s: InstanceSettings, src: Sources, *, add_model: bool = False) -> Instance:
    """The instance named by the settings and sources; every input is read and checked here."""
    from paperkit.methods.gen_select import instances as inst_mod

    given = [n for n, v in (("--synthetic", s.synthetic), ("--scores", src.scores),
                            ("--scores-csv", src.scores_csv), ("--records", src.records)) if v]
    if len(given) != 1:
        raise UsageError("give exactly one instance: --synthetic, --contexts with --scores, --scores-csv or "
                         f"--records (got {', '.join(given) or 'none'})")
    if src.contexts and not (src.scores or src.scores_csv):
        raise UsageError("--contexts goes with --scores or --scores-csv")
    if src.texts and not src.scores_csv:
        raise UsageError("--texts goes with --scores-csv (line i is the text of prompt_id i)")
    rng = np.random.default_rng(np.random.SeedSequence([int(s.seed), 7]))
    if s.synthetic == "switch":
        return inst_mod.make_switching(rng, types=s.types, dim=s.dim, models=s.models, prompts=s.prompts,
                                       noise=s.noise, add_model=add_model)
    if s.synthetic == "null":
        return inst_mod.make_null(rng, models=s.models, prompts=s.prompts, dim=s.dim)
    if s.synthetic == "text":
        return text_instance(rng, src, models=s.models, noise=s.noise, add_model=add_model)
    if s.synthetic is not None:
        raise UsageError(f"--synthetic {s.synthetic!r}: expected one of {', '.join(SYNTHETIC)}")
    if src.scores:
        if not src.contexts:
            raise UsageError("--scores needs --contexts (N×d) for the same N prompts")
        return inst_mod.from_arrays(src.contexts, src.scores, rescale=s.rescale)
    contexts = None
    if src.contexts:
        from paperkit.core.readers import read_numeric

        contexts = read_numeric(src.contexts, "contexts", ndim=2)
    if src.scores_csv:
        p_order, m_order, S, texts_by_id = inst_mod.read_long_csv(src.scores_csv)
        texts = None
        if contexts is None:
            if texts_by_id:
                texts = [texts_by_id[p] for p in p_order]
                if any(not t.strip() for t in texts):
                    raise InputError(f"{src.scores_csv}: a prompt text is empty")
            elif src.texts:
                lines = inst_mod.read_lines(src.texts)
                texts = []
                for p in p_order:
                    if not p.isdigit() or int(p) >= len(lines):
                        raise InputError(f"{src.scores_csv}: prompt_id {p!r} is not a line of {src.texts} "
                                         f"(0 to {len(lines) - 1})")
                    texts.append(lines[int(p)])
        embed = _embedder(src) if contexts is None else None
        return inst_mod.from_long(src.scores_csv, p_order, m_order, S, contexts=contexts, texts=texts,
                                  embed=embed, rescale=s.rescale)
    p_order, m_order, S = inst_mod.read_jsonl_records(src.records)
    return inst_mod.from_long(src.records, p_order, m_order, S, contexts=None, texts=p_order,
                              embed=_embedder(src), rescale=s.rescale)


def text_instance(rng: np.random.Generator, src: Sources, *, models: int = 3, noise: float = 0.1,
                  add_model: bool = False) -> Instance:
    """The semi-synthetic text instance: 8 caption categories × 40 captions embedded with MiniLM; model
    scores depend on the category as in the switching simulator (best model = category mod G, +0.05
    for model 0), plus Gaussian noise."""
    from paperkit.methods.gen_select.captions import CATEGORIES, captions
    from paperkit.methods.gen_select.instances import switching_means

    texts, labels = captions()
    X = np.asarray(_embedder(src)(texts), dtype=np.float64)
    labels = np.asarray(labels)
    m = switching_means(len(CATEGORIES), models)
    names = [f"model{g}" for g in range(models)]
    if add_model:
        extra = np.full((1, len(CATEGORIES)), 0.5)
        extra[0, -1] = 0.9
        m, names = np.vstack([m, extra]), names + [f"model{models}"]
    return Instance("text", X, m[:, labels][:, :, None], tuple(names), types=labels, type_names=CATEGORIES,
                    noise_sd=float(noise), prompts=tuple(texts))


# ------------------------------------------------------------------------------------ gen-select
@dataclass(frozen=True)
class SelectSettings(InstanceSettings, LearnerSettings):
    learners: tuple[str, ...] = ("pak-ucb", "rff-ucb", "lin-ucb", "greedy", "random", "oracle")
    horizon: int = 2000
    runs: int = 5
    add_model_at: int | None = None
    add_type_at: int | None = None
    points: int = 200


@dataclass(frozen=True)
class SelectInputs:
    settings: SelectSettings
    instance: Instance
    hyper: Hyper
    files: tuple[str, ...]


@dataclass(frozen=True)
class SelectResult:
    summary: dict[str, Any]
    rows: list[dict[str, Any]]          # one per learner, for the table
    seconds: dict[str, float]           # mean wall time per run, per learner (for the manifest)


def parse_eta(value: str | float) -> float | None:
    """``auto`` → None (the learner's formula), else a float ≥ 0."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return None
    try:
        eta = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"--eta {value!r}: expected 'auto' or a number ≥ 0") from None
    if not math.isfinite(eta) or eta < 0:
        raise UsageError(f"--eta {value!r}: expected 'auto' or a finite number ≥ 0")
    return eta


def check_select_settings(s: SelectSettings) -> None:
    for name in s.learners:
        if name not in LEARNERS:
            raise UsageError(f"unknown learner '{name}'; expected one of {', '.join(LEARNERS)}")
    if not s.alpha > 0:
        raise UsageError(f"--alpha {s.alpha}: expected alpha > 0")
    if s.rff_dim < 1:
        raise UsageError(f"--rff-dim {s.rff_dim}: expected at least 1 feature")
    if not 0 < s.delta < 1:
        raise UsageError(f"--delta {s.delta}: expected a value in (0, 1)")
    if not 1 <= s.horizon <= MAX_HORIZON:
        raise UsageError(f"--horizon {s.horizon}: expected 1 to {MAX_HORIZON} rounds")
    for flag, v in (("--add-model-at", s.add_model_at), ("--add-type-at", s.add_type_at)):
        if v is not None and not 0 < v < s.horizon:
            raise UsageError(f"{flag} {v}: expected a round in 1 .. horizon − 1 = {s.horizon - 1}")
    parse_eta(s.eta)
    Kernel(s.kernel, bandwidth=s.bandwidth, gamma=s.gamma, degree=s.poly_degree)
    if "kernel-ucb" in s.learners or "pak-ucb" in s.learners or "naive-krr" in s.learners:
        from paperkit.core.resources import check_memory

        # the kernel learners keep an n×n inverse per arm: at most horizon² doubles in all (×2 for growth)
        check_memory(16.0 * s.horizon**2, f"kernel inverses for --horizon {s.horizon}")


def prepare_select(s: SelectSettings, src: Sources) -> SelectInputs:
    check_select_settings(s)
    inst = load_instance(s, src, add_model=s.add_model_at is not None)
    if s.add_model_at is not None:
        starts = np.zeros(inst.n_models, dtype=np.int64)
        starts[-1] = s.add_model_at
        inst = replace(inst, arm_start=starts)
    if s.add_type_at is not None:
        if inst.types is None:
            raise UsageError("--add-type-at needs an instance with prompt types (--synthetic switch or text)")
        k = len(inst.type_names)
        starts = np.zeros(k, dtype=np.int64)
        starts[-1] = s.add_type_at
        inst = replace(inst, type_start=starts)
    hyper = Hyper(Kernel(s.kernel, bandwidth=s.bandwidth, gamma=s.gamma, degree=s.poly_degree), alpha=s.alpha,
                  eta=parse_eta(s.eta), delta=s.delta, rff_dim=s.rff_dim, rff_variant=s.rff_variant)
    files = tuple(f for f in (src.contexts, src.scores, src.scores_csv, src.records, src.texts) if f)
    return SelectInputs(s, inst, hyper, files)


def _grid(horizon: int, points: int) -> np.ndarray:
    return np.unique(np.linspace(1, horizon, min(points, horizon)).round().astype(np.int64))


def execute_select(inputs: SelectInputs, run: Any, *, progress: Callable[..., Any] = default_progress) -> SelectResult:
    """Every learner over every run (one stage per learner); writes metrics.csv, summary.json and
    gen_select.png into the run dir."""
    from paperkit.core import io, plots, tables
    from paperkit.methods.gen_select.plots import metrics_figure
    from paperkit.methods.gen_select.simulate import Trace, curves, simulate, type_shares, visit_shares

    s, inst = inputs.settings, inputs.instance
    grid = _grid(s.horizon, s.points)
    last = min(LAST, s.horizon)
    rows, table, seconds, curve_data = [], [], {}, {}
    learner_summaries = {}
    with progress(total=len(s.learners) * s.runs, desc="gen-select", unit="run") as bar:
        for name in s.learners:
            bar.set_postfix_str(name)

            def compute(name: str = name) -> dict[str, np.ndarray]:
                parts = []
                for r in range(s.runs):
                    parts.append(simulate(inst, name, s.horizon, hyper=inputs.hyper, seed=s.seed, run=r))
                    bar.update(1)
                keys = ("prompt", "arm", "score", "chosen_mean", "best_mean", "optimal")
                out = {k: np.stack([getattr(p, k) for p in parts]) for k in keys}
                out["eta"] = np.array([parts[0].eta])
                out["seconds"] = np.array([p.seconds for p in parts])
                return out

            done = run.has_checkpoint(f"{name}.npz")
            d = run.cached(name, compute, fmt="npz")
            if done:
                bar.update(s.runs)
            traces = [Trace(*(d[k][r] for k in ("prompt", "arm", "score", "chosen_mean", "best_mean", "optimal")),
                            float(d["eta"][0]), float(d["seconds"][r])) for r in range(s.runs)]
            cs = [curves(inst, tr) for tr in traces]
            for r, (tr, c) in enumerate(zip(traces, cs, strict=True)):
                for t in grid:
                    rows.append({"learner": name, "run": r, "t": int(t), "arm": inst.models[tr.arm[t - 1]],
                                 "score": float(tr.score[t - 1]), "otb": float(c["otb"][t - 1]),
                                 "regret": float(c["regret"][t - 1]), "opr": float(c["opr"][t - 1])})
            curve_data[name] = {k: np.stack([c[k][grid - 1] for c in cs]) for k in ("otb", "opr", "regret")}
            final = {k: np.array([c[k][-1] for c in cs]) for k in ("otb", "opr", "regret", "score")}
            opr_last = np.array([tr.optimal[-last:].mean() for tr in traces])
            shares = np.mean([visit_shares(tr, inst.n_models) for tr in traces], axis=0)
            entry = {"eta": traces[0].eta,
                     **{f"{k}_mean": float(v.mean()) for k, v in final.items()},
                     **{f"{k}_std": float(v.std(ddof=1)) if len(v) > 1 else 0.0 for k, v in final.items()},
                     "opr_last_mean": float(opr_last.mean()),
                     "opr_last_std": float(opr_last.std(ddof=1)) if len(opr_last) > 1 else 0.0,
                     "visit_shares": {m: float(v) for m, v in zip(inst.models, shares, strict=True)}}
            ts = [type_shares(inst, tr, last) for tr in traces]
            if ts[0] is not None:
                mean_ts = np.mean(ts, axis=0)
                entry["last_shares_by_type"] = {
                    tn: {m: float(v) for m, v in zip(inst.models, mean_ts[k], strict=True)}
                    for k, tn in enumerate(inst.type_names)}
            learner_summaries[name] = entry
            seconds[name] = float(np.mean(d["seconds"]))
            table.append({"learner": name, "eta": entry["eta"], "otb": entry["otb_mean"], "otb_se":
                          entry["otb_std"] / math.sqrt(s.runs), "opr": entry["opr_mean"],
                          "opr_last": entry["opr_last_mean"], "regret": entry["regret_mean"],
                          "seconds": seconds[name]})
    tables.write_table(run.file("metrics.csv"), rows)
    summary = {"instance": inst.summary(), "horizon": s.horizon, "runs": s.runs, "seed": s.seed,
               "last_rounds": last, "best_fixed_model": inst.models[inst.best_fixed_arm()],
               "learners": learner_summaries}
    io.write_json(run.file("summary.json"), summary)
    fig = metrics_figure(grid, curve_data, title=f"{inst.name}: T = {s.horizon}, {s.runs} runs")
    plots.save_figure(fig, run.file("gen_select.png"))
    return SelectResult(summary, table, seconds)


# -------------------------------------------------------------------------------- gen-select-sim
@dataclass(frozen=True)
class SimSettings(InstanceSettings):
    synthetic: str | None = "switch"
    samples: int = 5
    add_model: bool = False


def prepare_sim(s: SimSettings, src: Sources) -> Instance:
    if s.samples < 1:
        raise UsageError(f"--samples {s.samples}: expected at least 1")
    if s.synthetic not in SYNTHETIC:
        raise UsageError(f"--synthetic {s.synthetic!r}: expected one of {', '.join(SYNTHETIC)}")
    return load_instance(s, src, add_model=s.add_model)


def execute_sim(s: SimSettings, inst: Instance, run: Any) -> dict[str, Any]:
    """Write contexts.npy, scores.npy (G×N×S), types.npy (when known), prompts.txt (text instance),
    scores.csv (long format) and instance.json."""
    from paperkit.core import io, tables
    from paperkit.methods.gen_select.instances import draw_samples

    rng = np.random.default_rng(np.random.SeedSequence([int(s.seed), 8]))
    inst = draw_samples(inst, rng, s.samples)
    io.write_array(run.file("contexts.npy"), inst.contexts)
    io.write_array(run.file("scores.npy"), inst.samples)
    if inst.types is not None:
        io.write_array(run.file("types.npy"), inst.types.astype(np.int64))
    if inst.prompts:
        io.write_text(run.file("prompts.txt"), "".join(p + "\n" for p in inst.prompts))
    G, N, S = inst.samples.shape
    tables.write_table(run.file("scores.csv"), {
        "prompt_id": np.repeat(np.arange(N), G * S).tolist(),
        "model": [inst.models[g] for _ in range(N) for g in range(G) for _ in range(S)],
        "sample": [k for _ in range(N) for _ in range(G) for k in range(S)],
        "score": inst.samples.transpose(1, 0, 2).reshape(-1).tolist()})
    info = {**inst.summary(), "means": inst.means.tolist() if N <= 50 else None,
            "type_means": _type_means(inst)}
    io.write_json(run.file("instance.json"), info)
    return info


def _type_means(inst: Instance) -> dict[str, list[float]] | None:
    if inst.types is None:
        return None
    return {tn: [float(v) for v in inst.means[:, inst.types == k].mean(axis=1)] if np.any(inst.types == k) else None
            for k, tn in enumerate(inst.type_names)}


# ------------------------------------------------------------------------------ gen-select-embed
@dataclass(frozen=True)
class EmbedSettings:
    batch_size: int = 64


def execute_embed(texts: list[str], src: Sources, s: EmbedSettings, *, device: str = "cpu") -> tuple[np.ndarray, int]:
    """(N×384 embeddings, number computed rather than read from the cache); ``device``: auto, cpu or cuda."""
    from paperkit.core.devices import resolve_device
    from paperkit.methods.gen_select.embed import Embedder, default_cache_dir

    if s.batch_size < 1:
        raise UsageError(f"--batch-size {s.batch_size}: expected at least 1")
    cache = None if src.no_cache else (src.cache_dir or default_cache_dir())
    e = Embedder(src.model, cache_dir=cache, batch_size=s.batch_size, device=str(resolve_device(device)))
    X = e(texts)
    return X, e.computed

