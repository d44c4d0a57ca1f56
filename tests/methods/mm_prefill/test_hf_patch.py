"""The transformers patch on a tiny randomly initialised Llama (built here, nothing downloaded)."""

import pytest
import torch

transformers = pytest.importorskip("transformers")

from paperkit.methods.mm_prefill import hf_patch as P  # noqa: E402
from paperkit.methods.mm_prefill import search as SE  # noqa: E402


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
    model.set_attn_implementation("sdpa")
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
    state = P.patch_model(model, dense_doc())
    try:
        with torch.no_grad():
            out = model(ids).logits
    finally:
        P.unpatch_model(model)
    assert state["calls"]["sparse"] == 2
    assert (out - dense).abs().max() < 1e-4


def patched_logits(model, ids, doc):
    state = P.patch_model(model, doc)
    try:
        with torch.no_grad():
            out = model(ids).logits
            gen = model.generate(ids[:, :100], max_new_tokens=3, do_sample=False)
    finally:
        P.unpatch_model(model)
    return out, gen, state


def test_searched_patterns_stay_close_and_decode_is_dense(tiny):
    model, ids, dense = tiny
    cap = P.capture_qkv(model, ids)
    assert cap["q"].shape == (2, 4, 300, 16)
    errors = {}
    for density in (0.15, 0.5):
        doc = SE.search_model(cap["q"], cap["k"], cap["v"], density=density, block_size=32, sample_blocks=None)
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
        P.patch_model(model, dense_doc(heads=8))
