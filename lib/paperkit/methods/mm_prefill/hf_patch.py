"""Drop-in sparse prefill for Hugging Face ``transformers`` attention (Llama/Qwen2-style models).

:func:`patch_model` registers an attention function with ``transformers.AttentionInterface`` *and* a mask
function with ``transformers.masking_utils.AttentionMaskInterface`` under the same name (without the latter,
transformers ≥ 4.53 hands a newly named attention function the raw 2-D padding mask), then switches the
model to it. In prefill (as many queries as keys) every layer builds its heads' indices online from the
searched patterns and runs :func:`sparse_prefill`; grouped-query keys are repeated to the query heads.

Padded batches: each row's 4-D mask must be causal ∧ "key is a real token" (what transformers builds from a
2-D padding mask); the row's real tokens are then compacted into one contiguous sequence, so padded keys
are never in the sparse pattern nor in its softmax, and the outputs go back to their positions. Query rows
at padded positions are computed densely under the mask (a row with no allowed key gives zeros, never NaN).
A row whose mask has any other shape (sliding window, packed sequences) or with fewer real tokens than a
block, and every decoding step, runs PyTorch SDPA unchanged.
"""

from __future__ import annotations

from typing import Any

import torch

from paperkit.core.errors import InputError, PaperkitError
from paperkit.methods.mm_prefill.attention import sparse_prefill
from paperkit.methods.mm_prefill.search import check_patterns, index_from_patterns

ATTENTION_NAME = "paperkit_mm_prefill"
_STATE: dict[int, dict[str, Any]] = {}  # id(config) → patterns and options, looked up per call
MASK_CHECK_ROWS = 1024  # rows of the [N, N] mask compared at a time (bounded memory)


def _register(name: str, function: Any) -> None:
    """Register ``function`` as attention implementation ``name``, with SDPA's mask builder for it."""
    import transformers
    from transformers import AttentionInterface

    try:
        from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, AttentionMaskInterface
    except ImportError:
        raise PaperkitError(f"sparse prefill in a transformers model needs transformers ≥ 4.53 (its masking "
                            f"interface); found {transformers.__version__}") from None

    AttentionInterface.register(name, function)
    # the 4-D boolean mask SDPA gets (None when plain causal without padding)
    AttentionMaskInterface.register(name, ALL_MASK_ATTENTION_FUNCTIONS["sdpa"])


def _set_implementation(model: Any, name: str) -> None:
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation(name)
    else:  # transformers < 4.54
        model.config._attn_implementation = name


def _dense(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attention_mask: Any,
           scaling: float, **kwargs: Any) -> tuple[torch.Tensor, None]:
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    # no is_causal: transformers derives it (causal only for several queries and no mask); forcing it on a
    # one-query decoding step made 4.53's SDPA attend to the first key only
    return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling,
                                  dropout=kwargs.get("dropout", 0.0))


def _allowed(mask: torch.Tensor) -> torch.Tensor:
    """A transformers 4-D mask as bool 'may attend' (bool masks already are; float masks are additive)."""
    return mask if mask.dtype == torch.bool else mask == 0


def real_keys(allowed: torch.Tensor) -> torch.Tensor | None:
    """The real-token vector ``r`` if one row's [N, N] mask is exactly causal ∧ r[key] on the rows of real
    tokens, else None. (Rows at padded positions may be anything: older torch un-masks empty rows.)"""
    n = allowed.shape[-1]
    real = allowed[n - 1]  # the last query (real or right padding) sees every real key
    for start in range(0, n, MASK_CHECK_ROWS):
        rows = torch.arange(start, min(n, start + MASK_CHECK_ROWS), device=allowed.device)
        want = (torch.arange(n, device=allowed.device)[None, :] <= rows[:, None]) & real[None, :]
        keep = real[rows]
        if not bool((allowed[rows][keep] == want[keep]).all()):
            return None
    return real


def _padded_rows(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """Dense attention for a few query rows ([H, P, D]) under their mask rows [P, N]; empty rows → 0."""
    out = torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=allowed[None, None])
    return torch.where(allowed.any(-1)[None, :, None], out[0], torch.zeros((), dtype=out.dtype, device=out.device))


def mm_prefill_attention(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                         attention_mask: Any, scaling: float | None = None, dropout: float = 0.0,
                         **kwargs: Any) -> tuple[torch.Tensor, None]:
    """``transformers`` attention-interface function: [B, H, N, D] in, [B, N, H, D] out."""
    state = _STATE.get(id(module.config))
    bsz, heads, n, d = query.shape
    if scaling is None:
        scaling = d ** -0.5
    prefill = state is not None and key.shape[2] == n and n >= state["block_size"]
    if prefill and attention_mask is not None and (not isinstance(attention_mask, torch.Tensor)
                                                   or attention_mask.dim() != 4
                                                   or attention_mask.shape[-2:] != (n, n)):
        prefill = False  # a 2-D mask (no mask function registered) or a shape we do not know: stay exact
    if not prefill:
        if state is not None:
            state["calls"]["dense"] = state["calls"].get("dense", 0) + 1
        return _dense(module, query, key, value, attention_mask, scaling, dropout=dropout)
    groups = heads // key.shape[1]
    k = key.repeat_interleave(groups, dim=1)
    v = value.repeat_interleave(groups, dim=1)
    q = query * (scaling * d ** 0.5)  # the operator scales by 1/√d
    outs = []
    sparse_rows = dense_rows = 0
    for b in range(bsz):
        real = None
        allowed = None
        if attention_mask is not None:
            allowed = _allowed(attention_mask[b if attention_mask.shape[0] > 1 else 0, 0])
            real = real_keys(allowed)
            if real is None or int(real.sum()) < state["block_size"]:
                dense_rows += 1
                outs.append(_dense(module, query[b:b + 1], key[b:b + 1], value[b:b + 1],
                                   attention_mask[b:b + 1] if attention_mask.shape[0] > 1 else attention_mask,
                                   scaling, dropout=dropout)[0][0].transpose(0, 1))
                continue
        sparse_rows += 1
        if real is None or bool(real.all()):
            idx = index_from_patterns(q[b], k[b], state["patterns"], module.layer_idx, density=state["density"],
                                      block_size=state["block_size"])
            outs.append(sparse_prefill(q[b], k[b], v[b], idx, backend=state["backend"], validate=False))
            continue
        keep = torch.nonzero(real).flatten()
        qc, kc, vc = q[b][:, keep], k[b][:, keep], v[b][:, keep]
        idx = index_from_patterns(qc, kc, state["patterns"], module.layer_idx, density=state["density"],
                                  block_size=state["block_size"])
        out = torch.empty_like(q[b])
        out[:, keep] = sparse_prefill(qc, kc, vc, idx, backend=state["backend"], validate=False)
        pad = torch.nonzero(~real).flatten()
        out[:, pad] = _padded_rows(q[b][:, pad], k[b], v[b], allowed[pad])
        outs.append(out)
    calls = state["calls"]
    if sparse_rows:
        calls["sparse"] = calls.get("sparse", 0) + 1
    if dense_rows:
        calls["dense_rows"] = calls.get("dense_rows", 0) + dense_rows
    return torch.stack(outs).transpose(1, 2).contiguous(), None


def patch_model(model: Any, patterns: dict[str, Any], *, density: float | None = None, backend: str = "auto",
                block_size: int | None = None) -> dict[str, Any]:
    """Switch ``model``'s attention to sparse prefill with ``patterns`` (a search result for its heads).

    Returns the live state (``state["calls"]`` counts sparse and dense calls). Undo with :func:`unpatch_model`.
    """
    cfg = model.config
    heads = getattr(cfg, "num_attention_heads", None)
    layers = getattr(cfg, "num_hidden_layers", None)
    check_patterns(patterns, heads=heads, layers=layers)
    _register(ATTENTION_NAME, mm_prefill_attention)
    previous = cfg._attn_implementation
    state = {"patterns": patterns, "density": density, "backend": backend, "previous": previous,
             "block_size": int(block_size or patterns.get("block_size", 64)), "calls": {}}
    _STATE[id(cfg)] = state
    _set_implementation(model, ATTENTION_NAME)
    if cfg._attn_implementation != ATTENTION_NAME:
        raise InputError("this transformers model did not accept a custom attention implementation")
    return state


def unpatch_model(model: Any) -> None:
    state = _STATE.pop(id(model.config), None)
    if state is None:
        return
    _set_implementation(model, state["previous"])


def capture_qkv(model: Any, input_ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """Run one prefill and return the post-RoPE q, k, v of every layer as [L, H, N, D] (k, v repeated to
    the query heads): a calibration sample for :func:`paperkit.methods.mm_prefill.search.search`."""
    store: list[tuple[int, torch.Tensor, torch.Tensor, torch.Tensor]] = []

    def capture(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
        groups = query.shape[1] // key.shape[1]
        store.append((module.layer_idx, query[0].detach() * ((scaling or query.shape[-1] ** -0.5)
                                                             * query.shape[-1] ** 0.5),
                      key[0].repeat_interleave(groups, 0).detach(), value[0].repeat_interleave(groups, 0).detach()))
        return _dense(module, query, key, value, attention_mask, scaling or query.shape[-1] ** -0.5)

    name = "paperkit_capture_qkv"
    _register(name, capture)
    previous = model.config._attn_implementation
    _set_implementation(model, name)
    try:
        with torch.no_grad():
            model(input_ids[:1])
    finally:
        _set_implementation(model, previous)
    store.sort(key=lambda t: t[0])
    return {x: torch.stack([s[i] for s in store]) for i, x in ((1, "q"), (2, "k"), (3, "v"))}
