"""The logit-distillation losses the ranking loss plugs into (paper §4, baselines) and the total loss.

* KD (Hinton et al. 2015): T²·KL(softmax(z^t/T) ‖ softmax(z^s/T)).
* DKD (Zhao et al. 2022): KD split into a target-class part (TCKD, binary KL of p_target) and a
  non-target part (NCKD, KL among the other classes); loss = α·TCKD + β·NCKD, ×T², with a linear
  warm-up of its weight over the first epochs.
* LSKD (Sun et al. 2024): KD on per-sample z-scored logits (logit standardisation before the softmax).
* MLKD (Jin et al. 2023, multi-level logit distillation): instance-level KD averaged over several
  temperatures, the batch-level alignment of the B×B prediction-similarity (Gram) matrices
  ``||P_s P_sᵀ − P_t P_tᵀ||² / B`` and the class-level alignment of the C×C class-correlation matrices
  ``||P_sᵀ P_s − P_tᵀ P_t||² / C`` (as the official ``bc_loss``/``cc_loss``), each averaged over the
  temperatures. The strong augmentation and confidence masking of the full method are not included (the
  synthetic features have no image augmentation); ``mlkd_lite_loss`` is the earlier instance + batch
  version.

Total loss: α·CE + β·L_base + γ·L_rank (§3.4). Every weight is kept in :class:`DistillConfig` so runs
record them next to their results.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import torch
import torch.nn.functional as F

from paperkit.core.errors import ConfigError
from paperkit.methods.kd_rank.rank_loss import FORMS, kendall_rank_loss, standardize

BASES = ("kd", "dkd", "lskd", "mlkd", "none")
# (CE weight α, base weight β) per base, following mdistiller's CIFAR-100 settings.
DEFAULT_WEIGHTS = {"kd": (0.1, 0.9), "dkd": (1.0, 1.0), "lskd": (0.1, 0.9), "mlkd": (1.0, 1.0), "none": (1.0, 0.0)}
MLKD_TEMPERATURES = (2.0, 3.0, 4.0, 5.0, 6.0)


def kd_loss(student: torch.Tensor, teacher: torch.Tensor, temperature: float = 4.0) -> torch.Tensor:
    """Hinton's KD: T² · KL(p^t_T ‖ p^s_T), mean over the batch."""
    log_ps = F.log_softmax(student / temperature, dim=1)
    log_pt = F.log_softmax(teacher / temperature, dim=1)
    return (log_pt.exp() * (log_pt - log_ps)).sum(1).mean() * temperature**2


def dkd_loss(student: torch.Tensor, teacher: torch.Tensor, target: torch.Tensor, *, alpha: float = 1.0,
             beta: float = 8.0, temperature: float = 4.0) -> torch.Tensor:
    """Decoupled KD: α·TCKD + β·NCKD, both × T², mean over the batch."""
    mask = F.one_hot(target, student.shape[1]).bool()
    ps = F.softmax(student / temperature, dim=1)
    pt = F.softmax(teacher / temperature, dim=1)
    # binary (target, rest) distributions
    bs = torch.stack([(ps * mask).sum(1), (ps * ~mask).sum(1)], dim=1).clamp_min(1e-12)
    bt = torch.stack([(pt * mask).sum(1), (pt * ~mask).sum(1)], dim=1).clamp_min(1e-12)
    tckd = (bt * (bt.log() - bs.log())).sum(1).mean()
    # distributions among the non-target classes: push the target logit out of the softmax
    big = 1000.0
    log_ns = F.log_softmax(student / temperature - big * mask, dim=1)
    log_nt = F.log_softmax(teacher / temperature - big * mask, dim=1)
    nckd = (log_nt.exp() * (log_nt - log_ns)).sum(1).mean()
    return (alpha * tckd + beta * nckd) * temperature**2


def lskd_loss(student: torch.Tensor, teacher: torch.Tensor, temperature: float = 2.0) -> torch.Tensor:
    """KD on z-scored logits (logit standardisation)."""
    return kd_loss(standardize(student, 1e-7), standardize(teacher, 1e-7), temperature)


def mlkd_lite_loss(student: torch.Tensor, teacher: torch.Tensor,
                   temperatures: tuple[float, ...] = MLKD_TEMPERATURES) -> torch.Tensor:
    """Instance level (KD averaged over temperatures) + batch level (Gram matrices of predictions)."""
    instance = torch.stack([kd_loss(student, teacher, t) for t in temperatures]).mean()
    batch = []
    for t in temperatures:
        ps = F.softmax(student / t, dim=1)
        pt = F.softmax(teacher / t, dim=1)
        batch.append(((ps @ ps.T - pt @ pt.T) ** 2).sum() / ps.shape[0])
    return instance + torch.stack(batch).mean()


def mlkd_class_loss(student: torch.Tensor, teacher: torch.Tensor,
                    temperatures: tuple[float, ...] = MLKD_TEMPERATURES) -> torch.Tensor:
    """MLKD's class level: ``||P_sᵀP_s − P_tᵀP_t||²_F / C`` (C×C class correlations), mean over temperatures."""
    out = []
    for t in temperatures:
        ps = F.softmax(student / t, dim=1)
        pt = F.softmax(teacher / t, dim=1)
        out.append(((ps.T @ ps - pt.T @ pt) ** 2).sum() / ps.shape[1])
    return torch.stack(out).mean()


def mlkd_loss(student: torch.Tensor, teacher: torch.Tensor,
              temperatures: tuple[float, ...] = MLKD_TEMPERATURES) -> torch.Tensor:
    """Instance + batch + class levels (the ``mlkd`` base)."""
    return mlkd_lite_loss(student, teacher, temperatures) + mlkd_class_loss(student, teacher, temperatures)


@dataclass
class DistillConfig:
    """Everything that defines the student's loss; recorded next to every result."""

    base: str = "kd"
    temperature: float = 4.0
    ce_weight: float | None = None      # α; None → the base's default
    base_weight: float | None = None    # β; None → the base's default
    rank_weight: float = 0.0            # γ
    rank_k: float = 1.0
    rank_form: str = "tanh"
    rank_standardize: bool = True
    dkd_alpha: float = 1.0
    dkd_beta: float = 8.0
    dkd_warmup: int = 20
    # α and β as given (None: the base's default), so that a config made for one base can be re-based
    fixed_ce_weight: float | None = field(default=None, init=False, repr=False, compare=False)
    fixed_base_weight: float | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.base not in BASES:
            raise ConfigError(f"unknown base '{self.base}'; expected one of {', '.join(BASES)}")
        if self.rank_form not in FORMS:
            raise ConfigError(f"unknown rank form '{self.rank_form}'; expected one of {', '.join(FORMS)}")
        a, b = DEFAULT_WEIGHTS[self.base]
        self.fixed_ce_weight, self.fixed_base_weight = self.ce_weight, self.base_weight
        self.ce_weight = a if self.ce_weight is None else float(self.ce_weight)
        self.base_weight = b if self.base_weight is None else float(self.base_weight)
        for name in ("temperature", "rank_k"):
            v = getattr(self, name)
            if not v > 0 or v == float("inf"):
                raise ConfigError(f"{name.replace('_', '-')} = {v!r} is invalid; expected a finite number > 0")
        for name in ("ce_weight", "base_weight", "rank_weight", "dkd_alpha", "dkd_beta"):
            v = getattr(self, name)
            if not v >= 0 or v == float("inf"):
                raise ConfigError(f"{name.replace('_', '-')} = {v!r} is invalid; expected a finite number ≥ 0")
        if self.dkd_warmup < 0:
            raise ConfigError(f"dkd-warmup = {self.dkd_warmup} is invalid; expected ≥ 0")

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("fixed_ce_weight")
        d.pop("fixed_base_weight")
        return d


def base_loss(cfg: DistillConfig, student: torch.Tensor, teacher: torch.Tensor, target: torch.Tensor,
              epoch: int = 0) -> torch.Tensor:
    """The base distillation term L_base (without its weight β)."""
    if cfg.base == "kd":
        return kd_loss(student, teacher, cfg.temperature)
    if cfg.base == "dkd":
        warm = min(1.0, (epoch + 1) / cfg.dkd_warmup) if cfg.dkd_warmup > 0 else 1.0
        return warm * dkd_loss(student, teacher, target, alpha=cfg.dkd_alpha, beta=cfg.dkd_beta,
                               temperature=cfg.temperature)
    if cfg.base == "lskd":
        return lskd_loss(student, teacher, cfg.temperature)
    if cfg.base == "mlkd":
        return mlkd_loss(student, teacher)
    return student.new_zeros(())


def distill_loss(cfg: DistillConfig, student: torch.Tensor, teacher: torch.Tensor, target: torch.Tensor,
                 epoch: int = 0, *, log_rank: bool = True, teacher_order: torch.Tensor | None = None
                 ) -> tuple[torch.Tensor, dict[str, float]]:
    """α·CE + β·L_base + γ·L_rank and the value of each term.

    With ``log_rank`` the rank term is computed (without a graph) even when γ = 0, for the curves.
    ``teacher_order``: :func:`~.rank_loss.teacher_order` of ``teacher`` (saves the rank kernel a sort).
    """
    teacher = teacher.detach()
    ce = F.cross_entropy(student, target)
    total = cfg.ce_weight * ce
    base = base_loss(cfg, student, teacher, target, epoch) if cfg.base != "none" else None
    if base is not None and cfg.base_weight > 0:
        total = total + cfg.base_weight * base
    rank = None
    if cfg.rank_weight > 0:
        rank = kendall_rank_loss(student, teacher, form=cfg.rank_form, k=cfg.rank_k,
                                 standardize_logits=cfg.rank_standardize, teacher_order=teacher_order)
        total = total + cfg.rank_weight * rank
    elif log_rank:  # logged only: no graph, so γ = 0 trains exactly the base
        with torch.no_grad():
            rank = kendall_rank_loss(student.detach(), teacher, form=cfg.rank_form, k=cfg.rank_k,
                                     standardize_logits=cfg.rank_standardize, teacher_order=teacher_order)
    terms = {"ce": float(ce.detach()), "base": float(base.detach()) if base is not None else 0.0,
             "total": float(total.detach())}
    if rank is not None:
        terms["rank"] = float(rank.detach())
    return total, terms
