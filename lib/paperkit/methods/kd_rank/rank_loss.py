"""The Kendall's τ ranking loss (Guan et al., ICML 2025, §3: Kendall's τ and its differentiable surrogate).

τ between student logits z^s and teacher logits z^t over C classes is

    τ = 2 / (C(C−1)) · Σ_{i<j} sgn(z^s_i − z^s_j) · sgn(z^t_i − z^t_j).

The surrogate replaces the student-side sign by a smooth odd function f(Δ) of the pairwise gap:
``tanh`` (f = tanh(kΔ)), ``sigmoid`` (f = 2σ(kΔ) − 1) or ``product`` (the gaps themselves, normalised:
the soft τ becomes Σ Δ^s Δ^t / √(Σ Δ^s² Σ Δ^t²), which equals the Pearson correlation of the logits).
The teacher side is the constant sign (or tanh(kΔ^t) with ``soft_teacher``). L_rank = 1 − τ̃ ∈ [0, 2],
averaged over the batch, on raw (temperature-free) logits, optionally standardised per sample.

Both f and the teacher side are odd, so the sum over i<j is half the sum over all ordered pairs; the
pairwise forms therefore work on full C×C gap matrices, processed in row chunks so memory stays
bounded for large C. The gradient has the closed form (paper, §3.3)

    ∂τ̃/∂z^s_i = 2 / (C(C−1)) · Σ_{j≠i} f'(Δ^s_ij) · g(Δ^t_ij),

which the custom autograd function computes in the same chunked pass as the loss, so nothing of size
B·C² is kept for the backward pass.
"""

from __future__ import annotations

from typing import Any

import torch

from paperkit.core.errors import ConfigError, InputError

FORMS = ("tanh", "sigmoid", "product")
BACKENDS = ("auto", "numba", "torch")
STANDARDIZE_EPS = 1e-3
# Elements of one B×chunk×C gap block; a handful of such float32 blocks live at once (≈ 32 MiB each).
DEFAULT_BLOCK_ELEMENTS = 8 * 2**20


def check_rank_params(form: str = "tanh", k: float = 1.0) -> None:
    if form not in FORMS:
        raise ConfigError(f"unknown rank form '{form}'; expected one of {', '.join(FORMS)}")
    if not (isinstance(k, (int, float)) and k > 0 and k == k and k != float("inf")):
        raise ConfigError(f"rank k = {k!r} is invalid; expected a finite number > 0")


def standardize(z: torch.Tensor, eps: float = STANDARDIZE_EPS) -> torch.Tensor:
    """Per-sample z-score of logits: (z − mean) / (std + eps), over the class axis."""
    mean = z.mean(dim=-1, keepdim=True)
    std = z.std(dim=-1, keepdim=True, unbiased=False)
    return (z - mean) / (std + eps)


def _student_side(gap: torch.Tensor, form: str, k: float) -> tuple[torch.Tensor, torch.Tensor]:
    """f(Δ) and f'(Δ) for the pairwise forms."""
    if form == "tanh":
        f = torch.tanh(k * gap)
        return f, k * (1.0 - f * f)
    s = torch.sigmoid(k * gap)
    return 2.0 * s - 1.0, 2.0 * k * s * (1.0 - s)


def _teacher_side(gap: torch.Tensor, soft_teacher: bool, k: float) -> torch.Tensor:
    return torch.tanh(k * gap) if soft_teacher else torch.sign(gap)


def chunk_rows(batch: int, n_classes: int, block_elements: int = DEFAULT_BLOCK_ELEMENTS) -> int:
    """Rows i of the C×C gap matrix handled per block so that batch·rows·C ≤ block_elements."""
    return max(1, min(n_classes, block_elements // max(1, batch * n_classes)))


def pairwise_soft_tau(student: torch.Tensor, teacher: torch.Tensor, *, form: str = "tanh", k: float = 1.0,
                      soft_teacher: bool = False, want_grad: bool = False,
                      block_elements: int = DEFAULT_BLOCK_ELEMENTS) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-sample soft τ (shape B) and, with ``want_grad``, its closed-form gradient ∂τ̃/∂student (B×C).

    Plain tensor arithmetic (no autograd graph); ``form`` is ``tanh`` or ``sigmoid``.
    """
    B, C = student.shape
    norm = 1.0 / (C * (C - 1))
    tau = student.new_zeros(B)
    grad = torch.zeros_like(student) if want_grad else None
    rows = chunk_rows(B, C, block_elements)
    for a in range(0, C, rows):
        b = min(C, a + rows)
        gs = student[:, a:b, None] - student[:, None, :]  # (B, rows, C): Δ^s_ij for i in [a, b)
        gt = _teacher_side(teacher[:, a:b, None] - teacher[:, None, :], soft_teacher, k)
        f, fprime = _student_side(gs, form, k)
        tau += (f * gt).sum(dim=(1, 2))
        if want_grad:
            grad[:, a:b] = (fprime * gt).sum(dim=2)
        del gs, gt, f, fprime
    tau *= norm
    if want_grad:
        grad *= 2.0 * norm
    return tau, grad


class _PairwiseRankTau(torch.autograd.Function):
    """Batch-mean soft τ with the closed-form gradient computed in the forward pass (chunked)."""

    @staticmethod
    def forward(ctx: Any, student: torch.Tensor, teacher: torch.Tensor, form: str, k: float, soft_teacher: bool,
                block_elements: int, backend: str, fused_standardize: bool,
                order: torch.Tensor | None) -> torch.Tensor:
        tau, grad = _soft_tau(student.detach(), teacher.detach(), form=form, k=k, soft_teacher=soft_teacher,
                              want_grad=ctx.needs_input_grad[0], block_elements=block_elements, backend=backend,
                              fused_standardize=fused_standardize, order=order)
        ctx.save_for_backward(grad if grad is not None else student.new_zeros(0))
        return tau.mean()

    @staticmethod
    def backward(ctx: Any, grad_out: torch.Tensor) -> tuple:
        (grad,) = ctx.saved_tensors
        g = None
        if ctx.needs_input_grad[0]:
            g = grad * (grad_out / grad.shape[0])
        return g, None, None, None, None, None, None, None, None


def resolve_backend(backend: str, device: torch.device) -> str:
    """``auto``: the fused numba kernel for CPU tensors, the chunked torch path elsewhere (CUDA)."""
    if backend not in BACKENDS:
        raise ConfigError(f"unknown rank backend '{backend}'; expected one of {', '.join(BACKENDS)}")
    if backend == "auto":
        return "numba" if device.type == "cpu" else "torch"
    if backend == "numba" and device.type != "cpu":
        raise ConfigError("the numba rank backend runs on CPU tensors only; use backend 'torch' or 'auto'")
    return backend


def _soft_tau(student: torch.Tensor, teacher: torch.Tensor, *, form: str, k: float, soft_teacher: bool,
              want_grad: bool, block_elements: int, backend: str, fused_standardize: bool = False,
              order: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``fused_standardize``: ``student`` is raw and the numba kernel z-scores it (gradient w.r.t. the raw
    logits); only with the sign teacher on CPU (see :func:`_fused`)."""
    if resolve_backend(backend, student.device) == "numba":
        from paperkit.methods.kd_rank.kernels import soft_tau_numba

        tau, grad = soft_tau_numba(student.numpy(), teacher.numpy(), form=form, k=k, soft_teacher=soft_teacher,
                                   want_grad=want_grad, standardize=fused_standardize, eps=STANDARDIZE_EPS,
                                   order=None if order is None else order.numpy())
        return (torch.from_numpy(tau).to(student.dtype),
                torch.from_numpy(grad).to(student.dtype) if grad is not None else None)
    return pairwise_soft_tau(student, teacher, form=form, k=k, soft_teacher=soft_teacher, want_grad=want_grad,
                             block_elements=block_elements)


def _product_tau(student: torch.Tensor, teacher: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    """Per-sample Σ_{i<j} Δ^s Δ^t / √(Σ Δ^s² · Σ Δ^t²) = Pearson correlation of the logits (O(C))."""
    s = student - student.mean(dim=-1, keepdim=True)
    t = teacher - teacher.mean(dim=-1, keepdim=True)
    return (s * t).sum(-1) / torch.sqrt((s * s).sum(-1) * (t * t).sum(-1) + eps)


def _fused(form: str, soft_teacher: bool, backend: str, device: torch.device) -> bool:
    """The teacher-sorted numba kernel serves this call: it standardises the student itself."""
    return form != "product" and not soft_teacher and resolve_backend(backend, device) == "numba"


def teacher_order(teacher: torch.Tensor) -> torch.Tensor:
    """Classes by decreasing teacher logit per row (stable), for ``kendall_rank_loss(teacher_order=...)``:
    a training loop whose teacher logits are fixed computes it once instead of sorting every batch."""
    from paperkit.methods.kd_rank.kernels import teacher_order as order_kernel

    return torch.from_numpy(order_kernel(torch.as_tensor(teacher).detach().cpu().numpy()))


def kendall_rank_loss(student: torch.Tensor, teacher: torch.Tensor, *, form: str = "tanh", k: float = 1.0,
                      standardize_logits: bool = True, soft_teacher: bool = False,
                      block_elements: int = DEFAULT_BLOCK_ELEMENTS, reduction: str = "mean",
                      backend: str = "auto", teacher_order: torch.Tensor | None = None) -> torch.Tensor:
    """L_rank = 1 − τ̃(student, teacher), mean over the batch (or per sample with ``reduction='none'``).

    ``teacher`` is treated as a constant target (no gradient flows into it). ``backend``: ``auto``
    (numba kernel on CPU, chunked torch on GPU), ``numba`` or ``torch``. ``teacher_order``: the rows of
    :func:`teacher_order` for these teacher logits (used by the CPU kernel, ignored elsewhere).
    """
    check_rank_params(form, k)
    if student.shape != teacher.shape or student.dim() != 2:
        raise InputError(f"student logits {tuple(student.shape)} and teacher logits {tuple(teacher.shape)}: "
                         "expected two arrays of the same shape (batch × classes)")
    if student.shape[1] < 2:
        raise InputError("Kendall's τ needs at least 2 classes")
    teacher = teacher.detach()
    fused = _fused(form, soft_teacher, backend, student.device)
    if teacher_order is not None and tuple(teacher_order.shape) != tuple(teacher.shape):
        raise InputError(f"teacher_order {tuple(teacher_order.shape)}: expected the teacher's shape "
                         f"{tuple(teacher.shape)}")
    order = teacher_order if fused else None
    if standardize_logits and not fused:  # the fused kernel standardises the student itself
        student = standardize(student)
        teacher = standardize(teacher)
    fused_standardize = fused and standardize_logits
    if form == "product":
        tau = _product_tau(student, teacher)
        return 1.0 - (tau.mean() if reduction == "mean" else tau)
    if reduction == "none" or not (torch.is_grad_enabled() and student.requires_grad):
        tau, _ = _soft_tau(student.detach(), teacher, form=form, k=k, soft_teacher=soft_teacher, want_grad=False,
                           block_elements=block_elements, backend=backend, fused_standardize=fused_standardize,
                           order=order)
        return 1.0 - (tau if reduction == "none" else tau.mean())
    return 1.0 - _PairwiseRankTau.apply(student, teacher, form, float(k), bool(soft_teacher), int(block_elements),
                                        backend, fused_standardize, order)


class KendallRankLoss(torch.nn.Module):
    """Plug-in Kendall's τ ranking loss: ``loss = ce + kd + gamma * KendallRankLoss()(student, teacher)``.

    Parameters: ``form`` (tanh, sigmoid, product), steepness ``k``, per-sample standardisation of the
    logits (default on: the loss then does not change when the logits are scaled), ``soft_teacher``
    (tanh(kΔ^t) instead of sgn(Δ^t)), and ``block_elements`` (memory bound of one chunk).
    """

    def __init__(self, form: str = "tanh", k: float = 1.0, *, standardize: bool = True, soft_teacher: bool = False,
                 block_elements: int = DEFAULT_BLOCK_ELEMENTS, backend: str = "auto"):
        super().__init__()
        check_rank_params(form, k)
        if backend not in BACKENDS:
            raise ConfigError(f"unknown rank backend '{backend}'; expected one of {', '.join(BACKENDS)}")
        self.form, self.k, self.standardize = form, float(k), bool(standardize)
        self.soft_teacher, self.block_elements, self.backend = bool(soft_teacher), int(block_elements), backend

    def forward(self, student_logits: torch.Tensor, teacher_logits: torch.Tensor) -> torch.Tensor:
        return kendall_rank_loss(student_logits, teacher_logits, form=self.form, k=self.k,
                                 standardize_logits=self.standardize, soft_teacher=self.soft_teacher,
                                 block_elements=self.block_elements, backend=self.backend)

    def extra_repr(self) -> str:
        return f"form={self.form!r}, k={self.k}, standardize={self.standardize}, soft_teacher={self.soft_teacher}"


def kendall_tau(a: Any, b: Any) -> torch.Tensor:
    """Exact per-row Kendall τ-b between two (N, C) arrays (ties handled like scipy), as float64."""
    import numpy as np

    from paperkit.methods.kd_rank.kernels import kendall_tau_b_kernel

    a = np.ascontiguousarray(torch.as_tensor(a).detach().cpu().numpy(), dtype=np.float64)
    b = np.ascontiguousarray(torch.as_tensor(b).detach().cpu().numpy(), dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise InputError(f"kendall_tau: shapes {a.shape} and {b.shape}; expected two equal 2-D shapes")
    out = np.empty(a.shape[0])
    kendall_tau_b_kernel(a, b, out)
    return torch.from_numpy(out)
