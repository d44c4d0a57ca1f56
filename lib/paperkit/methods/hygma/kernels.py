"""The paper-mode hypergraph attention step fused into one numba pass per direction, and the whole HGCN for
a rollout step (CPU).

Per row r (a batch row and head) with n agents, E hyperedges and c channels, given the projected features x,
queries q and hyperedge keys k (agents-first: x, q (n, R, c), k (E, R, c)), the constants ½H̄ᵀ (n, E) and
D_v^{-1/2} (n,):

    A[i, e]  = softmax_e(scale · q_i·k_e)                 attention over hyperedges
    Hₐ[i, e] = ½H̄ᵀ[i, e] + ½A[i, e]                      attended incidence
    Dₑ[e]    = 1 / max(Σ_i Hₐ[i, e], 1e-6)
    y_e      = Σ_i Hₐ[i, e] D_v[i] x_i                     Hₐᵀ D_v X
    out_i    = D_v[i] Σ_e Hₐ[i, e] Dₑ[e] y_e               D_v Hₐ Dₑ Hₐᵀ D_v X

In torch the same step is ~12 element-wise and reduction ops forward and ~25 backward, several over an
(n, E, R, c) broadcast temporary: at the training batch (32 episodes × 21 steps, R ≈ 2,700 rows, n = 3) they
were ~4 ms of HYGMA-QMIX's ~12 ms extra per update over QMIX. :func:`infer_hgcn` runs both layers (linears
included) in one call per layer for the few rows of a rollout step, where ~40 torch calls of a few µs each
cost more than the arithmetic. :mod:`paperkit.methods.hygma.hgcn` keeps the torch formulation for other
devices and as the reference the tests compare against (to ~1e-7: the sums run in another order).
"""

from __future__ import annotations

import numpy as np
import torch
from numba import njit
from torch.autograd.function import once_differentiable

# Reassociation lets LLVM vectorise the channel sums; no flag that assumes finite values. Scalars stay in the
# arrays' dtype (``consts``): a float64 temporary in a float32 loop made the forward ~2× slower.
_FAST = {"reassoc", "contract"}


@njit(cache=True, fastmath=_FAST)
def _attend_forward(x, q, k, half, dv, scale, out, att):   # pragma: no cover - numba
    n, rows, c = x.shape
    edges = k.shape[0]
    consts = np.array([0.0, 1.0, 0.5, 1e-6, scale]).astype(x.dtype)
    zero, one, halve, tiny, scale = consts[0], consts[1], consts[2], consts[3], consts[4]
    ha = np.empty((n, edges), x.dtype)
    de = np.empty(edges, x.dtype)
    y = np.empty((edges, c), x.dtype)
    for r in range(rows):
        for i in range(n):
            for e in range(edges):
                s = zero
                for j in range(c):
                    s += q[i, r, j] * k[e, r, j]
                ha[i, e] = s * scale
            top = ha[i, 0]
            for e in range(1, edges):
                top = max(top, ha[i, e])
            total = zero
            for e in range(edges):
                ha[i, e] = np.exp(ha[i, e] - top)
                total += ha[i, e]
            for e in range(edges):
                a = ha[i, e] / total
                att[i, e, r] = a
                ha[i, e] = half[i, e] + halve * a
        for e in range(edges):
            size = zero
            for j in range(c):
                y[e, j] = zero
            for i in range(n):
                size += ha[i, e]
                w = ha[i, e] * dv[i]
                for j in range(c):
                    y[e, j] += w * x[i, r, j]
            de[e] = one / max(size, tiny)
        for i in range(n):
            for j in range(c):
                out[i, r, j] = zero
            for e in range(edges):
                w = ha[i, e] * de[e] * dv[i]
                for j in range(c):
                    out[i, r, j] += w * y[e, j]


@njit(cache=True, fastmath=_FAST)
def _attend_backward(x, q, k, half, dv, scale, att, grad_out, grad_att, gx, gq, gk):   # pragma: no cover
    n, rows, c = x.shape
    edges = k.shape[0]
    consts = np.array([0.0, 1.0, 0.5, 1e-6, scale]).astype(x.dtype)
    zero, one, halve, tiny, scale = consts[0], consts[1], consts[2], consts[3], consts[4]
    ha = np.empty((n, edges), x.dtype)
    de = np.empty(edges, x.dtype)
    dead = np.empty(edges, np.bool_)         # the clamp at 1e-6 was active: no gradient through the size
    y = np.empty((edges, c), x.dtype)
    gy = np.empty((edges, c), x.dtype)
    gha = np.empty((n, edges), x.dtype)
    gs = np.empty((n, edges), x.dtype)
    gde = np.empty(edges, x.dtype)
    for r in range(rows):
        for e in range(edges):
            size = zero
            for j in range(c):
                y[e, j] = zero
                gy[e, j] = zero
            for i in range(n):
                ha[i, e] = half[i, e] + halve * att[i, e, r]
                size += ha[i, e]
                w = ha[i, e] * dv[i]
                for j in range(c):
                    y[e, j] += w * x[i, r, j]
            dead[e] = size < tiny
            de[e] = one / max(size, tiny)
            gde[e] = zero
        # out_i = dv_i Σ_e ha_ie de_e y_e: gradients of y, of w = ha·de, then of ha and de
        for i in range(n):
            for e in range(edges):
                g = zero
                w = ha[i, e] * de[e] * dv[i]
                for j in range(c):
                    go = grad_out[i, r, j]
                    g += go * y[e, j]
                    gy[e, j] += w * go
                g *= dv[i]
                gha[i, e] = g * de[e]
                gde[e] += g * ha[i, e]
        for e in range(edges):
            gsize = zero if dead[e] else -gde[e] * de[e] * de[e]
            for i in range(n):
                gha[i, e] += gsize
        # y_e = Σ_i ha_ie dv_i x_i
        for i in range(n):
            for j in range(c):
                gx[i, r, j] = zero
            for e in range(edges):
                g = zero
                for j in range(c):
                    g += gy[e, j] * x[i, r, j]
                    gx[i, r, j] += ha[i, e] * dv[i] * gy[e, j]
                gha[i, e] += g * dv[i]
        # ha = ½H̄ᵀ + ½A, A = softmax(s): the softmax's backward per agent
        for i in range(n):
            dot = zero
            for e in range(edges):
                ga = grad_att[i, e, r] + halve * gha[i, e]
                gs[i, e] = ga
                dot += att[i, e, r] * ga
            for e in range(edges):
                gs[i, e] = att[i, e, r] * (gs[i, e] - dot) * scale
        for i in range(n):
            for j in range(c):
                g = zero
                for e in range(edges):
                    g += gs[i, e] * k[e, r, j]
                gq[i, r, j] = g
        for e in range(edges):
            for j in range(c):
                g = zero
                for i in range(n):
                    g += gs[i, e] * q[i, r, j]
                gk[e, r, j] = g


def _rows(t: torch.Tensor) -> np.ndarray:
    """(m, B, heads, c) → a C-contiguous (m, B·heads, c) numpy view (a copy only if t is not contiguous)."""
    a = (t if t.is_contiguous() else t.contiguous()).detach().numpy()
    return a.reshape(a.shape[0], -1, a.shape[-1])


def _forward(x: torch.Tensor, q: torch.Tensor, k: torch.Tensor, half: torch.Tensor, dv: torch.Tensor,
             scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    n, b, heads, c = x.shape
    edges = k.shape[0]
    xr = _rows(x)
    out = np.empty(xr.shape, xr.dtype)
    att = np.empty((n, edges, b * heads), xr.dtype)
    _attend_forward(xr, _rows(q), _rows(k), half.detach().numpy(), dv.detach().numpy(), scale, out, att)
    return torch.from_numpy(out).view(n, b, heads, c), torch.from_numpy(att).view(n, edges, b, heads)


class FusedHyperedgeAttention(torch.autograd.Function):
    """x, q (n, B, heads, c), k (E, B, heads, c), half (n, E), dv (n,) (both contiguous), scale → out
    (n, B, heads, c) and attention (n, E, B, heads), the layer's pre-ReLU output and attention (see the module
    docstring)."""

    @staticmethod
    def forward(ctx, x, q, k, half, dv, scale):
        out, att = _forward(x, q, k, half, dv, scale)
        ctx.save_for_backward(x, q, k, half, dv, att)
        ctx.scale = scale
        return out, att

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out, grad_att):
        x, q, k, half, dv, att = ctx.saved_tensors
        gx, gq, gk = torch.empty_like(x), torch.empty_like(q), torch.empty_like(k)
        n, edges = att.shape[:2]
        grad_att = (grad_att if grad_att.is_contiguous() else grad_att.contiguous()).numpy()
        _attend_backward(_rows(x), _rows(q), _rows(k), half.numpy(), dv.numpy(), ctx.scale,
                         att.numpy().reshape(n, edges, -1), _rows(grad_out), grad_att.reshape(n, edges, -1),
                         _rows(gx), _rows(gq), _rows(gk))
        return gx, gq, gk, None, None, None


def fused_attend(x: torch.Tensor, q: torch.Tensor, k: torch.Tensor, half: torch.Tensor, dv: torch.Tensor,
                 scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The fused step (CPU tensors of one floating dtype); see :class:`FusedHyperedgeAttention`."""
    if torch.is_grad_enabled() and (x.requires_grad or q.requires_grad or k.requires_grad):
        return FusedHyperedgeAttention.apply(x, q, k, half, dv, scale)
    return _forward(x, q, k, half, dv, scale)


@njit(cache=True, fastmath=_FAST)
def _linear_rows(x, w, b, out):   # pragma: no cover - numba
    """out[r] = w @ x[r] + b for rows r of 2-D x (m, k) and w (d, k); the sum over k is contiguous in both."""
    for r in range(x.shape[0]):
        for j in range(w.shape[0]):
            s = b[j]
            for kk in range(x.shape[1]):
                s += x[r, kk] * w[j, kk]
            out[r, j] = s


@njit(cache=True, fastmath=_FAST)
def _infer_layer(x, w, b, wq, bq, wk, bk, edge_mean, half, dv, heads, scale, out, att):   # pragma: no cover
    """One paper-mode layer without autograd: x (B, n, din) → ReLU features into out (B, n, d), attention into
    att (n, E, B·heads). The same arithmetic as the torch layer, for the few rows of a rollout step."""
    b_rows, n, _ = x.shape
    d = w.shape[0]
    c = d // heads
    edges = edge_mean.shape[0]
    flat = np.empty((b_rows * n, d), x.dtype)
    _linear_rows(x.reshape(b_rows * n, x.shape[2]), w, b, flat)
    xt = np.empty((n, b_rows, d), x.dtype)      # agents first, as the attention step reads it
    for r in range(b_rows):
        for i in range(n):
            xt[i, r] = flat[r * n + i]
    means = np.zeros((edges, b_rows, d), x.dtype)
    for e in range(edges):
        for i in range(n):
            m = edge_mean[e, i]
            if m != 0:
                for r in range(b_rows):
                    for j in range(d):
                        means[e, r, j] += m * xt[i, r, j]
    q = np.empty((n, b_rows, d), x.dtype)
    k = np.empty((edges, b_rows, d), x.dtype)
    for i in range(n):
        _linear_rows(xt[i], wq, bq, q[i])
    for e in range(edges):
        _linear_rows(means[e], wk, bk, k[e])
    nodes = np.empty((n, b_rows * heads, c), x.dtype)
    _attend_forward(xt.reshape(n, b_rows * heads, c), q.reshape(n, b_rows * heads, c),
                    k.reshape(edges, b_rows * heads, c), half, dv, scale, nodes, att)
    nodes3 = nodes.reshape(n, b_rows, d)
    for r in range(b_rows):
        for i in range(n):
            for j in range(d):
                v = nodes3[i, r, j]
                out[r, i, j] = v if not v < 0 else 0   # ReLU (NaN stays NaN, as in torch)


def infer_hgcn(x: torch.Tensor, layers: list[tuple[np.ndarray, ...]], edge_mean: torch.Tensor, half: torch.Tensor,
               dv: torch.Tensor, heads: int, scales: list[float]) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The paper-mode HGCN without autograd on x (B, n, d): features (B, n, out) and each layer's attention
    (B, heads, n, E). ``layers`` holds each layer's (θ weight, θ bias, query weight, query bias, key weight, key
    bias) as numpy arrays."""
    cur = (x if x.is_contiguous() else x.contiguous()).detach().numpy()
    b_rows, n, _ = cur.shape
    em, half_np, dv_np = edge_mean.numpy(), half.numpy(), dv.numpy()
    edges = em.shape[0]
    attentions = []
    for params, scale in zip(layers, scales, strict=True):
        out = np.empty((b_rows, n, params[0].shape[0]), cur.dtype)
        att = np.empty((n, edges, b_rows * heads), cur.dtype)
        _infer_layer(cur, *params, em, half_np, dv_np, heads, scale, out, att)
        attentions.append(torch.from_numpy(att).view(n, edges, b_rows, heads).permute(2, 3, 0, 1))
        cur = out
    return torch.from_numpy(cur), attentions
