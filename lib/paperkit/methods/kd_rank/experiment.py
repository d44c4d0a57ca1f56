"""The paper's comparison at laptop scale: each base with and without the ranking loss, over seeds.

A *job* is one student: (base, rank on/off, seed). Rank off means γ = 0 (exactly the base); rank on
means γ = ``rank_weight``. Jobs are independent, so a command can checkpoint after each and resume.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from paperkit.core.errors import ConfigError
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
    return replace(template, base=job.base, rank_weight=template.rank_weight if job.rank_on else 0.0,
                   ce_weight=template.extra.get("ce_weight"), base_weight=template.extra.get("base_weight"))


def run_job(job: Job, data: DistillData, teacher_train: np.ndarray, teacher_test: np.ndarray,
            template: DistillConfig, *, hidden: Sequence[int], settings: TrainSettings,
            on_epoch: Callable[[int], None] | None = None) -> JobResult:
    """Train and evaluate one student."""
    cfg = job_config(template, job)
    run = train_student(data, teacher_train, cfg, hidden=hidden, settings=settings, seed=job.seed,
                        teacher_test_logits=teacher_test, on_epoch=on_epoch)
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
    return JobResult(row, curves, run.model.state_dict(), run.train_seconds, test_logits)


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
