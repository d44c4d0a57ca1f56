"""The paper-mode HGCN on CPU: the attention step fused into one numba pass per direction, and the whole HGCN
for a rollout step.

Tensors are features first: x, q (heads, c, n, B), k (heads, c, E, B), attention (heads, n, E, B), with n agents,
E hyperedges, c channels per head and the B batch rows last, so every inner loop runs over a contiguous row of B
values. Per batch row and head, given the constants ½H̄ᵀ (n, E) and D_v^{-1/2} (n,):

    A[i, e]  = softmax_e(scale · q_i·k_e)                 attention over hyperedges
    Hₐ[i, e] = ½H̄ᵀ[i, e] + ½A[i, e]                      attended incidence
    Dₑ[e]    = 1 / max(Σ_i Hₐ[i, e], 1e-6)
    y_e      = Σ_i Hₐ[i, e] D_v[i] x_i                     Hₐᵀ D_v X
    out_i    = D_v[i] Σ_e Hₐ[i, e] Dₑ[e] y_e               D_v Hₐ Dₑ Hₐᵀ D_v X

In torch the same step is ~12 element-wise and reduction ops forward and ~25 backward, several over an
(n, E, B, heads, c) broadcast temporary: at the training batch (32 episodes × 21 steps, n = 3) they were ~4 ms
of HYGMA-QMIX's ~12 ms extra per update over QMIX. With the channels innermost (the agents-first layout) the
kernel's loops were 16 long and ran scalar, 3× slower than these. :func:`infer_hgcn` runs whole layers,
linears included, for the few rows of a rollout step, where ~40 torch calls of a few µs each cost more than the
arithmetic. :mod:`paperkit.methods.hygma.hgcn` keeps the torch formulation for other devices and as the
reference the tests compare against (to ~1e-7: the sums run in another order).
"""

from __future__ import annotations

import numpy as np
import torch
from numba import njit
from torch.autograd.function import once_differentiable

# Reassociation lets LLVM vectorise the sums; no flag that assumes finite values. Scalars stay in the arrays'
# dtype (``consts``): a float64 temporary in a float32 loop made the kernels ~2× slower.
_FAST = {"reassoc", "contract"}


@njit(cache=True, fastmath=_FAST)
def _attend_forward(x, q, k, half, dv, scale, out, att):   # pragma: no cover - numba
    heads, c, n, rows = x.shape
    edges = k.shape[2]
    consts = np.array([0.0, 1.0, 0.5, 1e-6, scale]).astype(x.dtype)
    zero, one, halve, tiny, scale = consts[0], consts[1], consts[2], consts[3], consts[4]
    ha = np.empty((n, edges, rows), x.dtype)
    de = np.empty((edges, rows), x.dtype)
    y = np.empty((edges, rows), x.dtype)
    top = np.empty(rows, x.dtype)
    total = np.empty(rows, x.dtype)
    for h in range(heads):
        for i in range(n):
            for e in range(edges):
                s = ha[i, e]
                s[:] = zero
                for j in range(c):
                    qj, kj = q[h, j, i], k[h, j, e]
                    for b in range(rows):
                        s[b] += qj[b] * kj[b]
                for b in range(rows):
                    s[b] *= scale
            top[:] = ha[i, 0]
            for e in range(1, edges):
                for b in range(rows):
                    top[b] = max(top[b], ha[i, e, b])
            total[:] = zero
            for e in range(edges):
                for b in range(rows):
                    v = np.exp(ha[i, e, b] - top[b])
                    ha[i, e, b] = v
                    total[b] += v
            for e in range(edges):
                a, w, hf = att[h, i, e], ha[i, e], half[i, e]
                for b in range(rows):
                    a[b] = w[b] / total[b]
                    w[b] = hf + halve * a[b]
        for e in range(edges):
            de[e] = zero
            for i in range(n):
                for b in range(rows):
                    de[e, b] += ha[i, e, b]
            for b in range(rows):
                de[e, b] = one / max(de[e, b], tiny)
        for j in range(c):
            for e in range(edges):
                ye = y[e]
                ye[:] = zero
                for i in range(n):
                    xi, w, d = x[h, j, i], ha[i, e], dv[i]
                    for b in range(rows):
                        ye[b] += w[b] * d * xi[b]
            for i in range(n):
                o, d = out[h, j, i], dv[i]
                o[:] = zero
                for e in range(edges):
                    w, dee, ye = ha[i, e], de[e], y[e]
                    for b in range(rows):
                        o[b] += w[b] * dee[b] * d * ye[b]


@njit(cache=True, fastmath=_FAST)
def _attend_backward(x, q, k, half, dv, scale, att, grad_out, grad_att, gx, gq, gk):   # pragma: no cover
    heads, c, n, rows = x.shape
    edges = k.shape[2]
    consts = np.array([0.0, 1.0, 0.5, 1e-6, scale]).astype(x.dtype)
    zero, one, halve, tiny, scale = consts[0], consts[1], consts[2], consts[3], consts[4]
    ha = np.empty((n, edges, rows), x.dtype)
    gha = np.empty((n, edges, rows), x.dtype)
    de = np.empty((edges, rows), x.dtype)
    gde = np.empty((edges, rows), x.dtype)
    dead = np.empty((edges, rows), np.bool_)       # the clamp at 1e-6 was active: no gradient through the size
    y = np.empty((c, edges, rows), x.dtype)
    gy = np.empty((c, edges, rows), x.dtype)
    dot = np.empty(rows, x.dtype)
    for h in range(heads):
        for e in range(edges):
            de[e] = zero
            for i in range(n):
                a, w, hf = att[h, i, e], ha[i, e], half[i, e]
                for b in range(rows):
                    w[b] = hf + halve * a[b]
                    de[e, b] += w[b]
            for b in range(rows):
                dead[e, b] = de[e, b] < tiny
                de[e, b] = one / max(de[e, b], tiny)
        # y_e = Σ_i ha_ie dv_i x_i (recomputed), then out_i = dv_i Σ_e ha_ie de_e y_e backwards: the gradients of
        # y (gy) and of w = dv·ha·de, whose parts go to ha (gha) and de (gde)
        for j in range(c):
            for e in range(edges):
                ye = y[j, e]
                ye[:] = zero
                for i in range(n):
                    xi, w, d = x[h, j, i], ha[i, e], dv[i]
                    for b in range(rows):
                        ye[b] += w[b] * d * xi[b]
        gha[:] = zero
        gde[:] = zero
        gy[:] = zero
        for j in range(c):
            for i in range(n):
                go, d = grad_out[h, j, i], dv[i]
                for e in range(edges):
                    ye, gye, w, dee, ghw, gd = y[j, e], gy[j, e], ha[i, e], de[e], gha[i, e], gde[e]
                    for b in range(rows):
                        g = go[b] * ye[b] * d
                        ghw[b] += g * dee[b]
                        gd[b] += g * w[b]
                        gye[b] += w[b] * dee[b] * d * go[b]
        # de = 1 / max(Σ_i ha_ie, 1e-6)
        for e in range(edges):
            for b in range(rows):
                gde[e, b] = zero if dead[e, b] else -gde[e, b] * de[e, b] * de[e, b]
            for i in range(n):
                for b in range(rows):
                    gha[i, e, b] += gde[e, b]
        # y_e = Σ_i ha_ie dv_i x_i
        for j in range(c):
            for i in range(n):
                xi, gxi, d = x[h, j, i], gx[h, j, i], dv[i]
                gxi[:] = zero
                for e in range(edges):
                    gye, w, ghw = gy[j, e], ha[i, e], gha[i, e]
                    for b in range(rows):
                        gxi[b] += w[b] * d * gye[b]
                        ghw[b] += gye[b] * d * xi[b]
        # ha = ½H̄ᵀ + ½A and A = softmax(scale · q·k): gha becomes the scores' gradient
        for i in range(n):
            dot[:] = zero
            for e in range(edges):
                a, ga, g = att[h, i, e], grad_att[h, i, e], gha[i, e]
                for b in range(rows):
                    g[b] = ga[b] + halve * g[b]
                    dot[b] += a[b] * g[b]
            for e in range(edges):
                a, g = att[h, i, e], gha[i, e]
                for b in range(rows):
                    g[b] = a[b] * (g[b] - dot[b]) * scale
        # scores s_ie = scale · q_i·k_e: each (i, e) sends its gradient to both sides
        gq[h] = zero
        gk[h] = zero
        for j in range(c):
            for i in range(n):
                for e in range(edges):
                    qj, kj, gqi, gke, g = q[h, j, i], k[h, j, e], gq[h, j, i], gk[h, j, e], gha[i, e]
                    for b in range(rows):
                        gqi[b] += g[b] * kj[b]
                        gke[b] += g[b] * qj[b]


def _np(t: torch.Tensor) -> np.ndarray:
    return (t if t.is_contiguous() else t.contiguous()).detach().numpy()


def _forward(x: torch.Tensor, q: torch.Tensor, k: torch.Tensor, half: torch.Tensor, dv: torch.Tensor,
             scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    heads, c, n, rows = x.shape
    edges = k.shape[2]
    # the kernels do not check bounds: a wrong shape here would read past the arrays
    if q.shape != x.shape or k.shape != (heads, c, edges, rows) or half.shape != (n, edges) or dv.shape != (n,):
        raise ValueError(f"fused attention shapes disagree: x {tuple(x.shape)}, q {tuple(q.shape)}, k {tuple(k.shape)}, "
                         f"half {tuple(half.shape)}, dv {tuple(dv.shape)}")
    xn = _np(x)
    out = np.empty(xn.shape, xn.dtype)
    att = np.empty((heads, n, edges, rows), xn.dtype)
    _attend_forward(xn, _np(q), _np(k), _np(half), _np(dv), scale, out, att)
    return torch.from_numpy(out), torch.from_numpy(att)


class FusedHyperedgeAttention(torch.autograd.Function):
    """x, q (heads, c, n, B), k (heads, c, E, B), half (n, E), dv (n,), scale → out (heads, c, n, B) and
    attention (heads, n, E, B): the layer's pre-ReLU output and attention (see the module docstring)."""

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
        _attend_backward(_np(x), _np(q), _np(k), _np(half), _np(dv), ctx.scale, _np(att), _np(grad_out),
                         _np(grad_att), gx.numpy(), gq.numpy(), gk.numpy())
        return gx, gq, gk, None, None, None


def fused_attend(x: torch.Tensor, q: torch.Tensor, k: torch.Tensor, half: torch.Tensor, dv: torch.Tensor,
                 scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The fused step on CPU tensors of one floating dtype; see :class:`FusedHyperedgeAttention`."""
    if torch.is_grad_enabled() and (x.requires_grad or q.requires_grad or k.requires_grad):
        return FusedHyperedgeAttention.apply(x, q, k, half, dv, scale)
    return _forward(x, q, k, half, dv, scale)


@njit(cache=True, fastmath=_FAST)
def _dot_rows(row, w, b, out, col):   # pragma: no cover - numba
    """out[t, col] = b[t] + w[t] · row for every output t (the sum runs along contiguous rows of w)."""
    for t in range(w.shape[0]):
        s = b[t]
        wt = w[t]
        for kk in range(row.shape[0]):
            s += row[kk] * wt[kk]
        out[t, col] = s


@njit(cache=True, fastmath=_FAST)
def _infer_layer(x, w, b, wq, bq, wk, bk, edge_mean, half, dv, heads, scale, out, att):   # pragma: no cover
    """One paper-mode layer without autograd, for the few rows of a rollout step: x (B, n, din) → ReLU features
    into out (B, n, d), attention into att (heads, n, E, B). The linears run over contiguous input rows and
    write the features-first layout the attention step reads."""
    rows, n, _ = x.shape
    d = w.shape[0]
    edges = edge_mean.shape[0]
    xt = np.empty((d, n * rows), x.dtype)
    for i in range(n):
        for r in range(rows):
            _dot_rows(x[r, i], w, b, xt, i * rows + r)
    xt_rows = np.ascontiguousarray(xt.T)                  # (n·B, d)
    means = np.zeros((edges * rows, d), x.dtype)
    for e in range(edges):
        for i in range(n):
            m = edge_mean[e, i]
            if m != 0:
                for r in range(rows):
                    src, dst = xt_rows[i * rows + r], means[e * rows + r]
                    for t in range(d):
                        dst[t] += m * src[t]
    q = np.empty((d, n * rows), x.dtype)
    k = np.empty((d, edges * rows), x.dtype)
    for col in range(n * rows):
        _dot_rows(xt_rows[col], wq, bq, q, col)
    for col in range(edges * rows):
        _dot_rows(means[col], wk, bk, k, col)
    c = d // heads
    nodes = np.empty((heads, c, n, rows), x.dtype)
    _attend_forward(xt.reshape(heads, c, n, rows), q.reshape(heads, c, n, rows), k.reshape(heads, c, edges, rows),
                    half, dv, scale, nodes, att)
    flat = nodes.reshape(d, n, rows)
    for r in range(rows):
        for i in range(n):
            for t in range(d):
                v = flat[t, i, r]
                out[r, i, t] = v if not v < 0 else 0   # ReLU (NaN stays NaN, as in torch)


def infer_hgcn(x: torch.Tensor, layers: list[tuple[np.ndarray, ...]], edge_mean: torch.Tensor, half: torch.Tensor,
               dv: torch.Tensor, heads: int, scales: list[float]) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The paper-mode HGCN without autograd on x (B, n, d): features (B, n, out) and each layer's attention
    (B, heads, n, E). ``layers`` holds each layer's (θ weight, θ bias, query weight, query bias, key weight, key
    bias) as numpy arrays."""
    b_rows, n, _ = x.shape
    cur = _np(x)
    em, half_np, dv_np = _np(edge_mean), _np(half), _np(dv)
    attentions = []
    for params, scale in zip(layers, scales, strict=True):
        out = np.empty((b_rows, n, params[0].shape[0]), cur.dtype)
        att = np.empty((heads, n, em.shape[0], b_rows), cur.dtype)
        _infer_layer(cur, *params, em, half_np, dv_np, heads, scale, out, att)
        attentions.append(torch.from_numpy(att).permute(3, 0, 1, 2))
        cur = out
    return torch.from_numpy(cur), attentions
