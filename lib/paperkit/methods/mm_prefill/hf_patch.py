"""Drop-in sparse prefill for Hugging Face ``transformers`` attention (Llama/Qwen2-style models).

:func:`patch_model` registers an attention function with ``transformers.AttentionInterface`` and switches
the model to it. In prefill (as many queries as keys, no padding, at least one block) every layer builds
its heads' indices online from the searched patterns and runs :func:`sparse_prefill`; grouped-query keys
are repeated to the query heads. Decoding steps and padded batches fall back to PyTorch SDPA unchanged.
"""

from __future__ import annotations

from typing import Any

import torch

from paperkit.core.errors import InputError
from paperkit.methods.mm_prefill.attention import sparse_prefill
from paperkit.methods.mm_prefill.search import check_patterns, index_from_patterns

ATTENTION_NAME = "paperkit_mm_prefill"
_STATE: dict[int, dict[str, Any]] = {}  # id(config) → patterns and options, looked up per call


def _dense(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attention_mask: Any,
           scaling: float, **kwargs: Any) -> tuple[torch.Tensor, None]:
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling,
                                  dropout=kwargs.get("dropout", 0.0), is_causal=True)


def mm_prefill_attention(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                         attention_mask: Any, scaling: float | None = None, dropout: float = 0.0,
                         **kwargs: Any) -> tuple[torch.Tensor, None]:
    """``transformers`` attention-interface function: [B, H, N, D] in, [B, N, H, D] out."""
    state = _STATE.get(id(module.config))
    bsz, heads, n, d = query.shape
    if scaling is None:
        scaling = d ** -0.5
    prefill = key.shape[2] == n and state is not None and n >= state["block_size"]
    if prefill and attention_mask is not None and attention_mask.dim() == 4:
        causal = torch.ones(n, n, dtype=torch.bool, device=query.device).tril()
        m = attention_mask if attention_mask.dtype == torch.bool else attention_mask == 0
        prefill = bool((m == causal).all())
    if not prefill:
        state and state.setdefault("calls", {}).update(dense=state["calls"].get("dense", 0) + 1)
        return _dense(module, query, key, value, attention_mask, scaling, dropout=dropout)
    groups = heads // key.shape[1]
    k = key.repeat_interleave(groups, dim=1)
    v = value.repeat_interleave(groups, dim=1)
    q = query * (scaling * d ** 0.5)  # the operator scales by 1/√d
    outs = []
    for b in range(bsz):
        idx = index_from_patterns(q[b], k[b], state["patterns"], module.layer_idx, density=state["density"],
                                  block_size=state["block_size"])
        outs.append(sparse_prefill(q[b], k[b], v[b], idx, backend=state["backend"], validate=False))
    state["calls"]["sparse"] = state["calls"].get("sparse", 0) + 1
    return torch.stack(outs).transpose(1, 2).contiguous(), None


def patch_model(model: Any, patterns: dict[str, Any], *, density: float | None = None, backend: str = "auto",
                block_size: int | None = None) -> dict[str, Any]:
    """Switch ``model``'s attention to sparse prefill with ``patterns`` (a search result for its heads).

    Returns the live state (``state["calls"]`` counts sparse and dense calls). Undo with :func:`unpatch_model`.
    """
    from transformers import AttentionInterface

    cfg = model.config
    heads = getattr(cfg, "num_attention_heads", None)
    layers = getattr(cfg, "num_hidden_layers", None)
    check_patterns(patterns, heads=heads, layers=layers)
    AttentionInterface.register(ATTENTION_NAME, mm_prefill_attention)
    previous = cfg._attn_implementation
    state = {"patterns": patterns, "density": density, "backend": backend, "previous": previous,
             "block_size": int(block_size or patterns.get("block_size", 64)), "calls": {}}
    _STATE[id(cfg)] = state
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation(ATTENTION_NAME)
    else:  # older transformers
        cfg._attn_implementation = ATTENTION_NAME
    if cfg._attn_implementation != ATTENTION_NAME:
        raise InputError("this transformers model did not accept a custom attention implementation")
    return state


def unpatch_model(model: Any) -> None:
    state = _STATE.pop(id(model.config), None)
    if state is None:
        return
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation(state["previous"])
    else:
        model.config._attn_implementation = state["previous"]


def capture_qkv(model: Any, input_ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """Run one prefill and return the post-RoPE q, k, v of every layer as [L, H, N, D] (k, v repeated to
    the query heads): a calibration sample for :func:`paperkit.methods.mm_prefill.search.search`."""
    from transformers import AttentionInterface

    store: list[tuple[int, torch.Tensor, torch.Tensor, torch.Tensor]] = []

    def capture(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
        groups = query.shape[1] // key.shape[1]
        store.append((module.layer_idx, query[0].detach() * ((scaling or query.shape[-1] ** -0.5)
                                                             * query.shape[-1] ** 0.5),
                      key[0].repeat_interleave(groups, 0).detach(), value[0].repeat_interleave(groups, 0).detach()))
        return _dense(module, query, key, value, attention_mask, scaling or query.shape[-1] ** -0.5)

    name = "paperkit_capture_qkv"
    AttentionInterface.register(name, capture)
    previous = model.config._attn_implementation
    model.set_attn_implementation(name)
    try:
        with torch.no_grad():
            model(input_ids[:1])
    finally:
        model.set_attn_implementation(previous)
    store.sort(key=lambda t: t[0])
    return {x: torch.stack([s[i] for s in store]) for i, x in ((1, "q"), (2, "k"), (3, "v"))}
