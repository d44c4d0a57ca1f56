"""Orchestration of kd-rank and kd-rank-diag: settings (every default), input checks, the staged run.

The paper's comparison at laptop scale: each base with and without the ranking loss, over seeds.
A *job* is one student: (base, rank on/off, seed). Rank off means γ = 0 (exactly the base); rank on
means γ = ``rank_weight``. Jobs are independent: each is one ``run.cached`` stage, so an interrupted
run resumes after its last finished student.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from paperkit.core.errors import ConfigError, InputError, UsageError
from paperkit.methods.kd_rank.bases import BASES, DistillConfig
from paperkit.methods.kd_rank.data import DistillData
from paperkit.methods.kd_rank.train import TrainSettings, evaluate, predict_logits, train_student

METRICS = ("top1", "top5", "kendall_tau", "kl")


@dataclass(frozen=True)
class Job:
    base: str
    rank_on: bool
    seed: int

    @property
    def name(self) -> str:
        return f"{self.base}_{'rank' if self.rank_on else 'norank'}_s{self.seed}"


@dataclass
class JobResult:
    row: dict             # seed, base, rank, metrics, T and every weight
    curves: list[dict]    # per-epoch loss terms
    state_dict: dict
    train_seconds: float
    test_logits: np.ndarray


def parse_list(text: str | Sequence, what: str, cast: Callable = str) -> list:
    items = [x.strip() for x in text.split(",")] if isinstance(text, str) else list(text)
    try:
        out = [cast(x) for x in items if str(x) != ""]
    except ValueError:
        raise ConfigError(f"{what} '{text}' is invalid; expected a comma-separated list") from None
    if not out:
        raise ConfigError(f"{what} is empty")
    if len(set(out)) != len(out):
        raise ConfigError(f"{what} '{text}' lists a value twice")
    return out


def parse_bases(text: str | Sequence[str]) -> list[str]:
    bases = parse_list(text, "bases")
    bad = [b for b in bases if b not in BASES]
    if bad:
        raise ConfigError(f"unknown base '{bad[0]}'; expected one or more of {', '.join(BASES)}")
    return bases


def parse_seeds(text: str | Sequence[int]) -> list[int]:
    seeds = parse_list(text, "seeds", int)
    if any(s < 0 for s in seeds):
        raise ConfigError(f"seeds '{text}' are invalid; expected integers ≥ 0")
    return seeds


def plan(bases: Sequence[str], seeds: Sequence[int], rank_weight: float) -> list[Job]:
    """Every (base, rank off/on, seed); rank-on jobs only when γ > 0."""
    states = (False, True) if rank_weight > 0 else (False,)
    return [Job(b, on, s) for b in bases for on in states for s in seeds]


def job_config(template: DistillConfig, job: Job) -> DistillConfig:
    """The job's loss: the template's weights with its base, γ = 0 when rank is off; α and β default per base
    unless the template fixes them (``ce_weight``/``base_weight`` given)."""
    return replace(template, base=job.base, rank_weight=template.rank_weight if job.rank_on else 0.0,
                   ce_weight=template.fixed_ce_weight, base_weight=template.fixed_base_weight)


def run_job(job: Job, data: DistillData, teacher_train: np.ndarray, teacher_test: np.ndarray,
            template: DistillConfig, *, hidden: Sequence[int], settings: TrainSettings,
            on_epoch: Callable[[int], None] | None = None, device: Any = None) -> JobResult:
    """Train and evaluate one student."""
    cfg = job_config(template, job)
    run = train_student(data, teacher_train, cfg, hidden=hidden, settings=settings, seed=job.seed,
                        teacher_test_logits=teacher_test, on_epoch=on_epoch, device=device)
    test_logits = predict_logits(run.model, data.X_test)
    metrics = evaluate(test_logits, teacher_test, data.y_test)
    weights = cfg.to_dict()
    row = {"seed": job.seed, "base": job.base, "rank": "on" if job.rank_on else "off",
           **{k: metrics[k] for k in METRICS},
           "temperature": weights["temperature"], "ce_weight": weights["ce_weight"],
           "base_weight": weights["base_weight"], "rank_weight": weights["rank_weight"], "rank_k": weights["rank_k"],
           "rank_form": weights["rank_form"], "rank_standardize": weights["rank_standardize"]}
    if job.base == "dkd":
        row.update(dkd_alpha=cfg.dkd_alpha, dkd_beta=cfg.dkd_beta, dkd_warmup=cfg.dkd_warmup)
    curves = [{"seed": job.seed, "base": job.base, "rank": row["rank"], **c} for c in run.curves]
    state = {k: v.detach().cpu() for k, v in run.model.state_dict().items()}
    return JobResult(row, curves, state, run.train_seconds, test_logits)


def summarize(rows: Sequence[dict]) -> list[dict]:
    """Mean ± std (sample std, ddof 1; 0 for one seed) of each metric per (base, rank)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        groups.setdefault((r["base"], r["rank"]), []).append(r)
    out = []
    for (base, rank), rs in groups.items():
        entry = {"base": base, "rank": rank, "n_seeds": len(rs), "temperature": rs[0]["temperature"],
                 "ce_weight": rs[0]["ce_weight"], "base_weight": rs[0]["base_weight"],
                 "rank_weight": rs[0]["rank_weight"], "rank_k": rs[0]["rank_k"]}
        for m in METRICS:
            v = np.array([r[m] for r in rs], dtype=np.float64)
            entry[f"{m}_mean"] = float(v.mean())
            entry[f"{m}_std"] = float(v.std(ddof=1)) if len(v) > 1 else 0.0
        out.append(entry)
    return out


# ------------------------------------------------------------------------------------------ kd-rank
@dataclass(frozen=True)
class KdRankSettings:
    """Every parameter of ``paperkit kd-rank`` and its default (the command's options are checked against it)."""

    data: str = "synth100"
    train_per_class: int = 200
    test_per_class: int = 100
    data_seed: int = 0
    teacher: str = "train"
    teacher_hidden: str = "512,512"
    teacher_epochs: int = 20
    teacher_seed: int = 0
    bases: tuple[str, ...] = ("kd",)
    rank_weight: float = 1.0
    rank_k: float = 1.0
    rank_form: str = "tanh"
    rank_standardize: bool = True
    temperature: float = 4.0
    ce_weight: float | None = None      # α; None: the base's default (kd/lskd 0.1, dkd/mlkd 1)
    base_weight: float | None = None    # β; None: the base's default (kd/lskd 0.9, dkd/mlkd 1)
    dkd_beta: float = 8.0
    dkd_warmup: int = 20
    student_hidden: str = "32"
    epochs: int = 20
    batch_size: int = 128
    lr: float = 3e-3
    weight_decay: float = 5e-4
    seeds: tuple[int, ...] = (0, 1, 2)
    device: str = "auto"
    max_memory_gb: float | None = None

    def template(self) -> DistillConfig:
        return DistillConfig(base=self.bases[0], temperature=self.temperature, rank_weight=self.rank_weight,
                             rank_k=self.rank_k, rank_form=self.rank_form, rank_standardize=self.rank_standardize,
                             dkd_beta=self.dkd_beta, dkd_warmup=min(self.dkd_warmup, self.epochs),
                             ce_weight=self.ce_weight, base_weight=self.base_weight)

    def student_training(self) -> TrainSettings:
        return TrainSettings(epochs=self.epochs, batch_size=self.batch_size, lr=self.lr,
                             weight_decay=self.weight_decay)

    def teacher_training(self) -> TrainSettings:
        return TrainSettings(epochs=self.teacher_epochs, batch_size=self.batch_size, lr=self.lr,
                             weight_decay=self.weight_decay)


@dataclass
class KdRankInputs:
    settings: KdRankSettings
    dataset: DistillData
    teacher_hidden: tuple[int, ...]
    student_hidden: tuple[int, ...]
    template: DistillConfig
    jobs: list[Job]
    teacher_state: dict | None = None    # a loaded teacher.pt
    files: list[str] = field(default_factory=list)   # every input file (hashed into the run's config)


@dataclass
class KdRankResult:
    rows: list[dict]
    curves: list[dict]
    timing: list[dict]
    summary: list[dict]
    teacher: dict
    teacher_test: np.ndarray


def data_memory_bytes(s: KdRankSettings) -> float:
    """Memory synth100 needs, from the options alone: float64 draws, float32 copies, teacher logits (C = 100)."""
    if s.data != "synth100":
        return 0.0
    rows = 100.0 * (float(s.train_per_class) + float(s.test_per_class))
    return rows * 64 * (8 + 8 + 4) + rows * 100 * 4 * 3


def prepare_kd_rank(s: KdRankSettings) -> KdRankInputs:
    """Check the settings and read every input (data, teacher) before a run dir exists."""
    from paperkit.core import io
    from paperkit.core.resources import MEMORY_FLAG, check_memory
    from paperkit.methods.kd_rank.data import load_data
    from paperkit.methods.kd_rank.train import parse_hidden

    check_memory(data_memory_bytes(s), f"synth100 with {s.train_per_class} + {s.test_per_class} samples per class",
                 limit_gb=s.max_memory_gb, flag=MEMORY_FLAG)
    bases = parse_bases(s.bases)
    seeds = parse_seeds(s.seeds)
    t_hidden, s_hidden = parse_hidden(s.teacher_hidden), parse_hidden(s.student_hidden)
    template = s.template()
    s.student_training(), s.teacher_training()  # validates epochs, lr, batch size
    dataset = load_data(s.data, train_per_class=s.train_per_class, test_per_class=s.test_per_class,
                        data_seed=s.data_seed)
    if s.teacher == "logits" and dataset.teacher_train is None:
        raise UsageError("--teacher logits needs --data npy:DIR with teacher_train.npy and teacher_test.npy")
    files = list(dataset.files)
    state = None
    if s.teacher not in ("train", "logits"):
        from paperkit.methods.kd_rank.train import load_teacher

        state = io.load_torch(s.teacher)
        load_teacher(state, dataset, s.teacher)  # checks classes, features and weights now
        files.append(os.fspath(s.teacher))
    return KdRankInputs(s, dataset, t_hidden, s_hidden, template, plan(bases, seeds, s.rank_weight), state, files)


def execute_kd_rank(inputs: KdRankInputs, run: Any, progress: Callable[..., Any] | None = None) -> KdRankResult:
    """Teacher (a stage unless given), then one stage per student; writes the models and test logits."""
    from paperkit.core import io
    from paperkit.core.devices import resolve_device
    from paperkit.methods.kd_rank.train import load_teacher, train_teacher

    if progress is None:
        from paperkit.core.progress import progress
    s, data = inputs.settings, inputs.dataset
    device = resolve_device(s.device)
    teacher_info: dict[str, Any] = {"source": s.teacher}
    if s.teacher == "logits":
        t_train, t_test = data.teacher_train, data.teacher_test
    else:
        state = inputs.teacher_state
        if state is None:
            def fit_teacher() -> dict:
                with progress(total=s.teacher_epochs, desc="teacher", unit="epoch") as bar:
                    t = train_teacher(data, hidden=inputs.teacher_hidden, seed=s.teacher_seed,
                                      settings=s.teacher_training(), on_epoch=lambda _: bar.update(), device=device)
                return t.checkpoint()

            state = run.cached("teacher", fit_teacher, fmt="pt")
            io.save_torch(run.file("teacher.pt"), state)
        teacher = load_teacher(state, data, s.teacher)
        t_train, t_test = predict_logits(teacher.model, data.X_train), predict_logits(teacher.model, data.X_test)
        teacher_info["hidden"] = list(teacher.hidden)
    if t_train.shape[1] != data.n_classes:
        raise InputError(f"teacher gives {t_train.shape[1]} classes but the data has {data.n_classes}")
    teacher_info.update(evaluate(t_test, None, data.y_test))
    rows, curves, timing = [], [], []
    with progress(total=len(inputs.jobs) * s.epochs, desc="students", unit="epoch") as bar:
        for job in inputs.jobs:
            def fit(job: Job = job) -> dict:
                bar.set_postfix_str(job.name)
                res = run_job(job, data, t_train, t_test, inputs.template, hidden=inputs.student_hidden,
                              settings=s.student_training(), on_epoch=lambda _: bar.update(), device=device)
                io.save_torch(run.file(f"student_{job.name}.pt"),
                              {"kind": "paperkit.kd_rank.student", "hidden": list(inputs.student_hidden),
                               "n_features": data.n_features, "n_classes": data.n_classes,
                               "state_dict": res.state_dict})
                io.write_array(run.file(f"student_{job.name}_test.npy"), res.test_logits)
                return {"row": res.row, "curves": res.curves, "seconds": res.train_seconds}

            done = run.cached(job.name, fit)
            rows.append(done["row"])
            curves.extend(done["curves"])
            timing.append({"seed": job.seed, "base": job.base, "rank": done["row"]["rank"],
                           "train_seconds": done["seconds"]})
    return KdRankResult(rows, curves, timing, summarize(rows), teacher_info, t_test)


# ------------------------------------------------------------------------------------- kd-rank-diag
@dataclass(frozen=True)
class KdRankDiagSettings:
    """Every parameter of ``paperkit kd-rank-diag`` and its default."""

    temperature: float = 4.0
    rank_k: float = 1.0
    rank_form: str = "tanh"
    rank_standardize: bool = True
    bins: int = 10
    scales: tuple[float, ...] = (0.5, 2.0)
    device: str = "auto"


@dataclass
class KdRankDiagInputs:
    settings: KdRankDiagSettings
    teacher: np.ndarray
    student: np.ndarray


@dataclass
class KdRankDiagResult:
    share: Any     # GradientShare
    scaling: list[dict]

    def rows(self) -> list[dict]:
        return self.share.rows() + self.scaling


LOGIT_LIMIT = 1e15  # |z|·scale/T, their squares and sums over classes stay finite in float64 up to here


def read_logits(path: str | os.PathLike, what: str) -> np.ndarray:
    """A finite (N, C) logit array from .npy/.npz/.csv/.tsv/.jsonl or ``-``, with magnitudes the losses can
    take (|z| ≤ LOGIT_LIMIT)."""
    from paperkit.core import io
    from paperkit.core.readers import read_numeric

    arr = read_numeric(path, what, ndim=2, dtype=np.float64, header="auto")
    big = float(np.abs(arr).max())
    if big > LOGIT_LIMIT:
        raise InputError(f"{io.display_name(path)}: {what} hold a value of magnitude {big:.3g}; expected logits up "
                         f"to {LOGIT_LIMIT:.0e} in magnitude (larger ones overflow the losses); rescale them")
    return arr


def prepare_kd_rank_diag(s: KdRankDiagSettings, teacher_logits: str, student_logits: str) -> KdRankDiagInputs:
    from paperkit.core import io
    from paperkit.methods.kd_rank.diagnostics import check_logit_pair

    if io.is_stdio(teacher_logits) and io.is_stdio(student_logits):
        raise UsageError("only one of --teacher-logits and --student-logits can be '-' (stdin)")
    for c in s.scales:
        if not (c > 0 and np.isfinite(c)):
            raise ConfigError(f"scale {c!r} is invalid; expected finite numbers > 0")
    t = read_logits(teacher_logits, "teacher logits")
    st = read_logits(student_logits, "student logits")
    t, st = check_logit_pair(t, st, names=(io.display_name(teacher_logits), io.display_name(student_logits)))
    if s.bins > t.shape[1]:
        raise UsageError(f"--bins {s.bins} is more than the {t.shape[1]} classes")
    return KdRankDiagInputs(s, t, st)


def execute_kd_rank_diag(inputs: KdRankDiagInputs) -> KdRankDiagResult:
    """Gradient shares per teacher-probability bin and the losses under logit scaling; non-finite results
    (which finite, bounded inputs should never give) are a ConvergenceError rather than NaN in the output."""
    from paperkit.core.devices import resolve_device
    from paperkit.core.errors import ConvergenceError
    from paperkit.methods.kd_rank.diagnostics import gradient_share, scale_sensitivity

    s = inputs.settings
    kw = {"temperature": s.temperature, "k": s.rank_k, "form": s.rank_form, "standardize": s.rank_standardize,
          "device": resolve_device(s.device)}
    share = gradient_share(inputs.teacher, inputs.student, n_bins=s.bins, **kw)
    scaling = scale_sensitivity(inputs.teacher, inputs.student, list(s.scales), **kw)
    values = [v for r in share.rows() + scaling for v in r.values() if isinstance(v, float)]
    if not np.all(np.isfinite(values)):
        raise ConvergenceError("the losses or their gradients are not finite for these logits and settings; "
                               "try a larger --temperature or smaller --scales")
    return KdRankDiagResult(share, scaling)
