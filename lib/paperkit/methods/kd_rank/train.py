"""Teacher and student training, evaluation and the base × rank-on/off experiment (paper §4 at laptop scale).

Models are MLPs (teacher default 2×512, student 1×32) trained with Adam and a cosine learning-rate
schedule; the paper's CIFAR protocol (ResNets, SGD, 240 epochs) does not fit 2 CPUs. Every student
is evaluated on the test split: top-1, top-5, the mean Kendall τ between its logits and the
teacher's (exact τ-b per sample) and KL(p^t ‖ p^s) at T = 1.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from paperkit.core.errors import ConfigError, ConvergenceError, InputError
from paperkit.methods.kd_rank.bases import DistillConfig, distill_loss
from paperkit.methods.kd_rank.data import DistillData
from paperkit.methods.kd_rank.rank_loss import kendall_rank_loss, kendall_tau, teacher_order

TEST_RANK_ROWS = 256


def make_mlp(n_in: int, hidden: Sequence[int], n_out: int) -> torch.nn.Sequential:
    layers: list[torch.nn.Module] = []
    width = n_in
    for h in hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
        width = h
    layers.append(torch.nn.Linear(width, n_out))
    return torch.nn.Sequential(*layers)


def parse_hidden(text: str | Sequence[int]) -> tuple[int, ...]:
    """'512,512' → (512, 512); '' or 'linear' → () (a linear model)."""
    if not isinstance(text, str):
        return tuple(int(h) for h in text)
    t = text.strip().lower()
    if t in ("", "linear", "0", "none"):
        return ()
    try:
        out = tuple(int(h) for h in t.split(","))
    except ValueError:
        raise ConfigError(f"hidden sizes '{text}' are invalid; expected comma-separated positive integers") from None
    if any(h <= 0 for h in out):
        raise ConfigError(f"hidden sizes '{text}' are invalid; expected positive integers")
    return out


@dataclass
class TrainSettings:
    """Optimiser settings of one training run (the commands fill them from their settings dataclass)."""

    epochs: int = 20
    lr: float = 3e-3
    batch_size: int = 128
    weight_decay: float = 5e-4

    def __post_init__(self) -> None:
        if self.epochs < 1 or self.batch_size < 1:
            raise ConfigError("epochs and batch size must be ≥ 1")
        if not (self.lr > 0 and math.isfinite(self.lr)) or not (self.weight_decay >= 0):
            raise ConfigError("learning rate must be > 0 and weight decay ≥ 0")


def _batches(n: int, batch_size: int, gen: torch.Generator) -> list[torch.Tensor]:
    perm = torch.randperm(n, generator=gen)
    return [perm[i:i + batch_size] for i in range(0, n, batch_size)]


def _optimizer(model: torch.nn.Module, s: TrainSettings, steps: int):
    opt = torch.optim.Adam(model.parameters(), lr=s.lr, weight_decay=s.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: 0.5 * (1 + math.cos(math.pi * min(i, steps) / steps)))
    return opt, sched


@torch.no_grad()
def predict_logits(model: torch.nn.Module, X: np.ndarray, batch_size: int = 4096) -> np.ndarray:
    model.eval()
    device = next(model.parameters()).device
    x = torch.as_tensor(X, dtype=torch.float32)
    out = torch.cat([model(x[i:i + batch_size].to(device)).cpu() for i in range(0, len(x), batch_size)])
    model.train()
    return out.numpy()


def _check_loss(loss: torch.Tensor, what: str, epoch: int) -> None:
    """A non-finite training loss stops the run with one line (exit 1) instead of writing NaN results."""
    if not bool(torch.isfinite(loss)):
        raise ConvergenceError(f"{what}: the training loss became {float(loss.detach())} in epoch {epoch + 1}; lower --lr, "
                               "raise --temperature or rescale the features")


def topk_accuracy(logits: np.ndarray, y: np.ndarray, k: int) -> float:
    k = min(k, logits.shape[1])
    top = np.argpartition(-logits, k - 1, axis=1)[:, :k]
    return float((top == y[:, None]).any(1).mean() * 100.0)


def evaluate(student: np.ndarray, teacher: np.ndarray | None, y: np.ndarray) -> dict[str, float]:
    """top-1/top-5 (%), mean Kendall τ(student, teacher) and KL(p^t ‖ p^s) at T = 1 on one split."""
    out = {"top1": topk_accuracy(student, y, 1), "top5": topk_accuracy(student, y, 5)}
    if teacher is not None:
        s, t = torch.as_tensor(student, dtype=torch.float64), torch.as_tensor(teacher, dtype=torch.float64)
        tau = kendall_tau(s, t)
        out["kendall_tau"] = float(torch.nanmean(tau))
        log_ps, log_pt = F.log_softmax(s, 1), F.log_softmax(t, 1)
        out["kl"] = float((log_pt.exp() * (log_pt - log_ps)).sum(1).mean())
    return out


# ------------------------------------------------------------------------------------------- teacher
@dataclass
class Teacher:
    model: torch.nn.Module
    hidden: tuple[int, ...]
    n_features: int
    n_classes: int
    train_seconds: float = 0.0

    def checkpoint(self) -> dict:
        return {"kind": "paperkit.kd_rank.teacher", "hidden": list(self.hidden), "n_features": self.n_features,
                "n_classes": self.n_classes,
                "state_dict": {k: v.detach().cpu() for k, v in self.model.state_dict().items()}}


def train_teacher(data: DistillData, *, hidden: Sequence[int] = (512, 512), settings: TrainSettings | None = None,
                  seed: int = 0, on_epoch: Callable[[int], None] | None = None, device: Any = None) -> Teacher:
    """Cross-entropy training of the teacher MLP (initialised on the CPU, so a seed gives the same start
    on every device)."""
    s = settings or TrainSettings()
    torch.manual_seed(seed)
    model = make_mlp(data.n_features, hidden, data.n_classes).to(device)
    gen = torch.Generator().manual_seed(seed)
    X, y = torch.as_tensor(data.X_train, device=device), torch.as_tensor(data.y_train, device=device)
    steps = s.epochs * math.ceil(len(X) / s.batch_size)
    opt, sched = _optimizer(model, s, steps)
    t0 = time.perf_counter()
    for epoch in range(s.epochs):
        for idx in _batches(len(X), s.batch_size, gen):
            idx = idx.to(X.device)
            loss = F.cross_entropy(model(X[idx]), y[idx])
            _check_loss(loss, "teacher", epoch)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
        if on_epoch:
            on_epoch(epoch)
    return Teacher(model.cpu(), tuple(hidden), data.n_features, data.n_classes, time.perf_counter() - t0)


def load_teacher(state: dict, data: DistillData, source: str = "teacher") -> Teacher:
    """A teacher from :meth:`Teacher.checkpoint` (as loaded from a .pt), checked against the data."""
    if not isinstance(state, dict) or state.get("kind") != "paperkit.kd_rank.teacher":
        raise InputError(f"{source}: not a kd-rank teacher checkpoint (write one with paperkit kd-rank --teacher train)")
    try:
        n_classes, n_features = int(state["n_classes"]), int(state["n_features"])
        hidden = tuple(int(h) for h in state["hidden"])
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{source}: teacher checkpoint lacks n_classes/n_features/hidden; expected one written "
                         "by paperkit kd-rank") from None
    if n_classes != data.n_classes:
        raise InputError(f"{source}: teacher has {state['n_classes']} classes but the data {data.name} has "
                         f"{data.n_classes}; expected the same")
    if n_features != data.n_features:
        raise InputError(f"{source}: teacher takes {state['n_features']} features but the data {data.name} has "
                         f"{data.n_features}")
    model = make_mlp(data.n_features, hidden, data.n_classes)
    try:
        model.load_state_dict(state["state_dict"])
    except (RuntimeError, KeyError, TypeError, AttributeError) as e:
        raise InputError(f"{source}: weights do not fit the recorded architecture ({str(e).splitlines()[0]})") from None
    return Teacher(model, hidden, data.n_features, data.n_classes)


# ------------------------------------------------------------------------------------------- student
@dataclass
class StudentRun:
    model: torch.nn.Module
    curves: list[dict] = field(default_factory=list)
    train_seconds: float = 0.0


def train_student(data: DistillData, teacher_train_logits: np.ndarray, cfg: DistillConfig, *,
                  hidden: Sequence[int] = (32,), settings: TrainSettings | None = None, seed: int = 0,
                  teacher_test_logits: np.ndarray | None = None, log_rank: bool = False,
                  on_epoch: Callable[[int], None] | None = None, device: Any = None) -> StudentRun:
    """Train a student on α·CE + β·L_base + γ·L_rank against fixed teacher logits.

    The seed fixes the initial weights and the batch order, and nothing else draws random numbers, so
    two runs that differ only in γ = 0 vs the rank term switched off are bit-identical.
    """
    s = settings or TrainSettings()
    if teacher_train_logits.shape != (len(data.X_train), data.n_classes):
        raise InputError(f"teacher logits have shape {teacher_train_logits.shape}; expected "
                         f"({len(data.X_train)}, {data.n_classes})")
    torch.manual_seed(seed)
    model = make_mlp(data.n_features, hidden, data.n_classes).to(device)
    gen = torch.Generator().manual_seed(seed)
    X, y = torch.as_tensor(data.X_train, device=device), torch.as_tensor(data.y_train, device=device)
    T = torch.as_tensor(teacher_train_logits, dtype=torch.float32, device=device)
    # the teacher is fixed: its class order is sorted once here, not in every batch (CPU rank kernel)
    order = teacher_order(T) if T.device.type == "cpu" and (cfg.rank_weight > 0 or log_rank) else None
    steps = s.epochs * math.ceil(len(X) / s.batch_size)
    opt, sched = _optimizer(model, s, steps)
    curves = []
    t0 = time.perf_counter()
    for epoch in range(s.epochs):
        sums: dict[str, float] = {}
        batches = _batches(len(X), s.batch_size, gen)
        for idx in batches:
            idx = idx.to(X.device)
            loss, terms = distill_loss(cfg, model(X[idx]), T[idx], y[idx], epoch, log_rank=log_rank,
                                       teacher_order=None if order is None else order[idx])
            _check_loss(loss, f"student (seed {seed}, base {cfg.base})", epoch)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            for key, v in terms.items():
                sums[key] = sums.get(key, 0.0) + v
        row = {"epoch": epoch + 1, **{f"loss_{k}": v / len(batches) for k, v in sums.items()}}
        test_logits = predict_logits(model, data.X_test)
        row["test_top1"] = topk_accuracy(test_logits, data.y_test, 1)
        if teacher_test_logits is not None:  # the rank loss of every student (rank on or off), on ≤ 256 test rows
            m = min(len(test_logits), TEST_RANK_ROWS)
            with torch.no_grad():
                row["test_rank_loss"] = float(kendall_rank_loss(
                    torch.as_tensor(test_logits[:m]), torch.as_tensor(teacher_test_logits[:m]), form=cfg.rank_form,
                    k=cfg.rank_k, standardize_logits=cfg.rank_standardize))
        curves.append(row)
        if on_epoch:
            on_epoch(epoch)
    return StudentRun(model, curves, time.perf_counter() - t0)
