"""A small pre-LN causal transformer with a KV cache (the LM and, with the same head, the token-level RM)."""

from __future__ import annotations

import math

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, mask, cache):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if cache is not None:
            k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
        att = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x)), (k, v)


class TinyLM(nn.Module):
    """Causal LM; ``forward(ids, pad_left, cache)`` returns logits for every position and the new cache.

    ``pad_left[b]`` counts left-padding tokens of row b; they are masked out and positions start after them.
    """

    def __init__(self, vocab: int, d: int = 64, layers: int = 2, heads: int = 4, max_len: int = 512):
        super().__init__()
        self.config = {"vocab": vocab, "d": d, "layers": layers, "heads": heads, "max_len": max_len}
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids, pad_left=None, cache=None):
        b, t = ids.shape
        past = 0 if cache is None else cache[0][0].shape[2]
        if pad_left is None:
            pad_left = torch.zeros(b, dtype=torch.long, device=ids.device)
        steps = torch.arange(past, past + t, device=ids.device)
        pos = (steps[None, :] - pad_left[:, None]).clamp(min=0)
        keys = torch.arange(past + t, device=ids.device)
        allowed = (keys[None, :] <= steps[:, None])[None] & (keys[None, None, :] >= pad_left[:, None, None])
        allowed = allowed | (keys[None, None, :] == steps[None, :, None])  # a padding slot sees itself: no NaN
        mask = allowed[:, None]  # (b, 1, t, past + t)
        x = self.tok(ids) + self.pos(pos)
        new_cache = []
        for i, block in enumerate(self.blocks):
            x, kv = block(x, mask, None if cache is None else cache[i])
            new_cache.append(kv)
        return self.head(self.ln(x)), new_cache


def param_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def init_scale(model: nn.Module) -> None:
    """GPT-style init so tiny random models give non-degenerate logits."""
    for p in model.parameters():
        if p.dim() > 1:
            nn.init.normal_(p, std=0.02 * math.sqrt(2))


class HFCausalLM(nn.Module):
    """Adapter giving a transformers causal LM the ``(ids, pad_left, cache) -> (logits, cache)`` interface."""

    def __init__(self, hf_model):
        super().__init__()
        self.hf = hf_model

    def forward(self, ids, pad_left=None, cache=None):
        past = 0 if cache is None else cache.get_seq_length()
        width = past + ids.shape[1]
        mask = torch.ones(ids.shape[0], width, dtype=torch.long, device=ids.device)
        if pad_left is not None:
            mask = (torch.arange(width, device=ids.device)[None, :] >= pad_left[:, None]).long()
        out = self.hf(input_ids=ids, attention_mask=mask, past_key_values=cache, use_cache=True)
        return out.logits, out.past_key_values


def load_hf_causal_lm(path) -> HFCausalLM:
    """A causal LM from a local directory only (no network)."""
    from transformers import AutoModelForCausalLM

    from paperkit.core.errors import InputError

    try:
        hf = AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"{path}: not a local causal LM directory ({exc.__class__.__name__})") from exc
    return HFCausalLM(hf.eval())
