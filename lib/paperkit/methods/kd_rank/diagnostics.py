"""Diagnostics of the paper's two arguments (§3.2–3.3): where the gradient goes, and scale invariance.

* :func:`gradient_share` — the share of the absolute gradient (w.r.t. the student logits) that falls
  on each teacher-probability decile of the classes, for KD's KL at temperature T and for L_rank.
  KL's gradient T·(p^s − p^t) follows probability mass; the rank gradient follows pairwise gaps, so
  it moves weight to the low-probability ("dark knowledge") channels.
* :func:`scale_sensitivity` — the relative change of each loss when the student logits are scaled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from paperkit.core.errors import ConfigError, InputError
from paperkit.core.validate import check_finite
from paperkit.methods.kd_rank.bases import kd_loss
from paperkit.methods.kd_rank.rank_loss import kendall_rank_loss


def check_logit_pair(teacher: np.ndarray, student: np.ndarray, names: tuple[str, str] = ("teacher", "student")
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Two finite (N, C) float arrays of the same shape, C ≥ 2, or an InputError naming the problem."""
    t, s = np.asarray(teacher), np.asarray(student)
    for arr, name in ((t, names[0]), (s, names[1])):
        if arr.ndim != 2:
            raise InputError(f"{name} logits have shape {arr.shape}; expected a 2-D array (samples × classes)")
        if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
            raise InputError(f"{name} logits have dtype {arr.dtype}; expected real numbers")
        if arr.shape[0] == 0 or arr.shape[1] < 2:
            raise InputError(f"{name} logits have shape {arr.shape}; expected at least 1 sample and 2 classes")
    if t.shape != s.shape:
        raise InputError(f"{names[0]} logits have shape {t.shape} but {names[1]} logits {s.shape}; "
                         "expected the same shape")
    check_finite(t, f"{names[0]} logits")
    check_finite(s, f"{names[1]} logits")
    return t.astype(np.float64), s.astype(np.float64)


def _per_sample_grads(loss_fn, student: torch.Tensor) -> torch.Tensor:
    s = student.clone().requires_grad_(True)
    # every loss here is a batch mean of independent per-sample terms: × B gives per-sample gradients
    loss_fn(s).backward()
    return s.grad * s.shape[0]


def loss_gradients(teacher: np.ndarray, student: np.ndarray, *, temperature: float = 4.0, k: float = 1.0,
                   form: str = "tanh", standardize: bool = True, device: object = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample gradients of T²·KL and of L_rank w.r.t. the raw student logits, both (N, C)."""
    t = torch.as_tensor(teacher, dtype=torch.float64, device=device)
    s = torch.as_tensor(student, dtype=torch.float64, device=device)
    g_kl = _per_sample_grads(lambda x: kd_loss(x, t, temperature), s)
    g_rank = _per_sample_grads(lambda x: kendall_rank_loss(x, t, form=form, k=k, standardize_logits=standardize), s)
    return g_kl.cpu().numpy(), g_rank.cpu().numpy()


def decile_shares(grad: np.ndarray, teacher: np.ndarray, n_bins: int = 10) -> np.ndarray:
    """Mean over samples of the share of |grad| on each bin of classes ranked by teacher probability.

    Bin 0 holds the lowest-probability classes. Bins split the C ranks as evenly as possible.
    """
    N, C = grad.shape
    if not 1 <= n_bins <= C:
        raise ConfigError(f"bins = {n_bins} is invalid; expected between 1 and the number of classes ({C})")
    order = np.argsort(teacher, axis=1, kind="stable")  # ascending teacher logit = ascending probability
    absg = np.take_along_axis(np.abs(grad), order, axis=1)
    total = absg.sum(1, keepdims=True)
    total[total == 0] = 1.0
    edges = np.linspace(0, C, n_bins + 1).round().astype(int)
    per_bin = np.stack([absg[:, a:b].sum(1) for a, b in zip(edges[:-1], edges[1:], strict=True)], axis=1)
    return (per_bin / total).mean(0)


def low_half_share(grad: np.ndarray, teacher: np.ndarray) -> float:
    """Mean share of |grad| on the 50% of classes with the lowest teacher probability."""
    return float(decile_shares(grad, teacher, 2)[0])


@dataclass
class GradientShare:
    bins: np.ndarray       # (n_bins,) bin index, 0 = lowest teacher probability
    kl: np.ndarray
    rank: np.ndarray
    kl_low_half: float
    rank_low_half: float

    def rows(self) -> list[dict]:
        n = len(self.bins)
        return [{"diagnostic": "grad_share", "bin": int(b) + 1, "of": n, "kl_share": float(a), "rank_share": float(r)}
                for b, a, r in zip(self.bins, self.kl, self.rank, strict=True)]


def gradient_share(teacher: np.ndarray, student: np.ndarray, *, temperature: float = 4.0, k: float = 1.0,
                   form: str = "tanh", standardize: bool = True, n_bins: int = 10, device: object = None
                   ) -> GradientShare:
    t, s = check_logit_pair(teacher, student)
    g_kl, g_rank = loss_gradients(t, s, temperature=temperature, k=k, form=form, standardize=standardize,
                                  device=device)
    return GradientShare(np.arange(n_bins), decile_shares(g_kl, t, n_bins), decile_shares(g_rank, t, n_bins),
                         low_half_share(g_kl, t), low_half_share(g_rank, t))


def scale_sensitivity(teacher: np.ndarray, student: np.ndarray, scales: Sequence[float] = (0.5, 2.0), *,
                      temperature: float = 4.0, k: float = 1.0, form: str = "tanh", standardize: bool = True,
                      device: object = None) -> list[dict]:
    """KL(T) and L_rank at student·scale, and their relative change from scale 1."""
    t, s = check_logit_pair(teacher, student)
    for c in scales:
        if not (c > 0 and np.isfinite(c)):
            raise ConfigError(f"scale {c!r} is invalid; expected finite numbers > 0")
    tt = torch.as_tensor(t, device=device)

    def losses(c: float) -> tuple[float, float]:
        x = torch.as_tensor(s * c, device=device)
        with torch.no_grad():
            return (float(kd_loss(x, tt, temperature)),
                    float(kendall_rank_loss(x, tt, form=form, k=k, standardize_logits=standardize)))

    kl0, r0 = losses(1.0)
    rows = []
    for c in scales:
        kl, r = losses(float(c))
        rows.append({"diagnostic": "scale", "scale": float(c), "kl": kl, "kl_base": kl0,
                     "kl_rel_change": abs(kl - kl0) / max(abs(kl0), 1e-300), "rank": r, "rank_base": r0,
                     "rank_rel_change": abs(r - r0) / max(abs(r0), 1e-300)})
    return rows


def gradient_share_figure(share: GradientShare, title: str = ""):
    """Bar chart of the gradient share per teacher-probability bin, KL vs rank loss."""
    from paperkit.core.plots import new_figure

    fig, ax = new_figure(figsize=(6.4, 3.6))
    x = share.bins + 1
    w = 0.4
    ax.bar(x - w / 2, share.kl, w, label=f"KL (low half {share.kl_low_half:.2f})", color="#4c72b0")
    ax.bar(x + w / 2, share.rank, w, label=f"rank loss (low half {share.rank_low_half:.2f})", color="#dd8452")
    ax.axhline(1.0 / len(x), color="grey", lw=0.8, ls="--", label="uniform")
    ax.set_xlabel("teacher-probability bin (1 = lowest)")
    ax.set_ylabel("share of |∂L/∂z^s|")
    ax.set_xticks(x)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=9)
    return fig
