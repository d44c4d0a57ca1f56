"""The transformers patch on a tiny randomly initialised Llama (built here, nothing downloaded)."""

import pytest
import torch

transformers = pytest.importorskip("transformers")

from paperkit.methods.mm_prefill import hf_patch, search  # noqa: E402


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=96, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
    model = transformers.LlamaForCausalLM(cfg).eval()
    with torch.no_grad():
        # random init attends almost uniformly; q = k = 3·(hidden slice) makes heads peak on the token itself
        # and its RoPE neighbourhood, as local heads of trained models do
        eye = torch.eye(64) * 3.0
        for layer in model.model.layers:
            layer.self_attn.k_proj.weight.copy_(eye[:32])
            layer.self_attn.q_proj.weight.copy_(torch.cat([eye[16 * (h // 2):16 * (h // 2) + 16] for h in range(4)]))
    hf_patch._set_implementation(model, "sdpa")
    ids = torch.randint(0, 96, (1, 300), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        dense = model(ids).logits
    return model, ids, dense


def dense_doc(layers=2, heads=4, pattern="dense"):
    return {"format": "paperkit.mm_prefill.patterns", "heads": heads, "layers_count": layers, "block_size": 32,
            "density": 1.0, "layers": {str(i): {str(h): {"pattern": pattern, "params": {}} for h in range(heads)}
                                       for i in range(layers)}}


def test_full_patterns_reproduce_the_dense_model(tiny):
    """Every tile selected: the patched path (GQA repeat, scaling, un-permute) is exact."""
    model, ids, dense = tiny
    state = hf_patch.patch_model(model, dense_doc())
    try:
        with torch.no_grad():
            out = model(ids).logits
    finally:
        hf_patch.unpatch_model(model)
    assert state["calls"]["sparse"] == 2
    assert (out - dense).abs().max() < 1e-4


def patched_logits(model, ids, doc):
    state = hf_patch.patch_model(model, doc)
    try:
        with torch.no_grad():
            out = model(ids).logits
            gen = model.generate(ids[:, :100], max_new_tokens=3, do_sample=False)
    finally:
        hf_patch.unpatch_model(model)
    return out, gen, state


def test_searched_patterns_stay_close_and_decode_is_dense(tiny):
    model, ids, dense = tiny
    cap = hf_patch.capture_qkv(model, ids)
    assert cap["q"].shape == (2, 4, 300, 16)
    errors = {}
    for density in (0.15, 0.5):
        doc = search.search_model(cap["q"], cap["k"], cap["v"], density=density, block_size=32, sample_blocks=None)
        recall = min(e["score"] for row in doc["layers"].values() for e in row.values())
        out, gen, state = patched_logits(model, ids, doc)
        errors[density] = float((out - dense).norm() / dense.norm())
        agree = float((out.argmax(-1) == dense.argmax(-1)).float().mean())
        assert gen.shape == (1, 103)
        assert state["calls"]["sparse"] >= 4 and state["calls"]["dense"] >= 2  # decode steps stay dense
    assert recall > 0.97 and errors[0.5] < 0.15 and agree > 0.9, (recall, errors, agree)
    assert errors[0.5] < errors[0.15]
    assert model.config._attn_implementation == "sdpa"


def test_patch_refuses_patterns_for_another_model(tiny):
    from paperkit.core.errors import InputError

    model, _, _ = tiny
    with pytest.raises(InputError, match="for 8 heads"):
        hf_patch.patch_model(model, dense_doc(heads=8))


def padded_batch(ids, side, pad=16):
    """Row 0: the 300 tokens; row 1: its last 284 tokens padded by ``pad`` on ``side`` (pad id 0)."""
    n = ids.shape[1]
    real = ids[0, pad:]
    batch = torch.zeros(2, n, dtype=ids.dtype)
    mask = torch.zeros(2, n, dtype=torch.long)
    batch[0], mask[0] = ids[0], 1
    where = slice(pad, n) if side == "left" else slice(0, n - pad)
    batch[1, where], mask[1, where] = real, 1
    return batch, mask, where


def run(model, batch, mask, doc=None, new_tokens=4):
    state = hf_patch.patch_model(model, doc) if doc is not None else None
    try:
        with torch.no_grad():
            logits = model(batch, attention_mask=mask).logits
            gen = model.generate(batch, attention_mask=mask, max_new_tokens=new_tokens, do_sample=False,
                                 pad_token_id=0)
    finally:
        if doc is not None:
            hf_patch.unpatch_model(model)
    return logits, gen, state


@pytest.mark.parametrize("side,pad", [("left", 16), ("right", 16), ("left", 285)])
def test_padded_batch_with_full_patterns_equals_the_unpatched_model(tiny, side, pad):
    """Padding reaches the patched attention as a mask: padded keys are excluded, padded query rows are finite,
    and forward logits and greedy generate() equal the unpatched model's. A row with fewer real tokens than
    a block (15 < 32) runs dense."""
    model, ids, _ = tiny
    batch, mask, where = padded_batch(ids, side, pad)
    ref_logits, ref_gen, _ = run(model, batch, mask)
    logits, gen, state = run(model, batch, mask, dense_doc())
    assert torch.isfinite(logits).all()
    assert (logits[0] - ref_logits[0]).abs().max() < 1e-4
    assert (logits[1, where] - ref_logits[1, where]).abs().max() < 1e-4
    assert torch.equal(gen, ref_gen)
    assert state["calls"]["sparse"] >= 2
    # one row per layer (2) in the forward and in generate()'s prefill
    assert state["calls"].get("dense_rows", 0) == (4 if pad > 300 - 32 else 0)


@pytest.mark.parametrize("side", ["left", "right"])
def test_sparse_patterns_ignore_padding(tiny, side):
    """With a searched (sparse) pattern, a padded row gives what the same tokens give alone: the index is
    built on the real tokens only and no padded key enters any softmax (RoPE scores are shift-invariant)."""
    model, ids, _ = tiny
    cap = hf_patch.capture_qkv(model, ids)
    doc = search.search_model(cap["q"], cap["k"], cap["v"], density=0.3, block_size=32, sample_blocks=None)
    batch, mask, where = padded_batch(ids, side)
    logits, gen, _ = run(model, batch, mask, doc, new_tokens=3)
    alone_ids = ids[:, 16:]
    alone, alone_gen, _ = run(model, alone_ids, torch.ones_like(alone_ids), doc, new_tokens=3)
    assert torch.isfinite(logits).all()
    assert (logits[1, where] - alone[0]).abs().max() < 1e-4
    if side == "left":  # the prompt's end is row 1's end: its greedy continuation is the unpadded one
        assert torch.equal(gen[1, -3:], alone_gen[0, -3:])


def test_real_keys_accepts_only_causal_padding_masks():
    n = 40
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    real = torch.ones(n, dtype=torch.bool)
    real[:7] = False
    assert torch.equal(hf_patch.real_keys(causal & real), real)
    unmasked = causal & real
    unmasked[:7] = True  # older torch un-masks empty (padded) rows: still a padding mask on the real rows
    assert torch.equal(hf_patch.real_keys(unmasked), real)
    window = causal & ~torch.ones(n, n, dtype=torch.bool).tril(-9)  # sliding window of 8: not padding
    assert hf_patch.real_keys(window) is None
