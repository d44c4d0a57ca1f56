import time

import pytest
import torch

from paperkit.core.errors import InputError
from paperkit.methods.rgtg import decode, model

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny_gpt2_dir(tmp_path_factory):
    from transformers import GPT2Config, GPT2LMHeadModel

    path = tmp_path_factory.mktemp("gpt2")
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=40, n_positions=64, n_embd=32, n_layer=2, n_head=4)).save_pretrained(path)
    return path


def test_hf_cached_decoding_equals_full_recompute(tiny_gpt2_dir):
    lm = model.load_hf_causal_lm(tiny_gpt2_dir)
    ids = torch.randint(0, 40, (2, 9))
    with torch.no_grad():
        full, _ = lm(ids)
        part, cache = lm(ids[:, :5])
        rest, _ = lm(ids[:, 5:], cache=cache)
    assert torch.allclose(torch.cat([part, rest], 1), full, atol=1e-5)


def test_hf_farma_decoding_counts_calls(tiny_gpt2_dir):
    lm = model.load_hf_causal_lm(tiny_gpt2_dir)
    rm = model.load_hf_causal_lm(tiny_gpt2_dir)
    ids = torch.randint(0, 40, (2, 4))
    out, c = decode.generate(lm, ids, 5, method="farma", rm=rm, k=5)
    assert out.shape == (2, 5) and (c.lm_calls, c.rm_calls) == (10, 10)
    loop, _ = decode.generate(lm, ids, 4, method="args", rm=rm, k=5, greedy=True)
    batched, c = decode.generate(lm, ids, 4, method="args", rm=rm, k=5, greedy=True, score_impl="batched")
    assert torch.equal(loop, batched) and c.rm_calls == 2 * 4 * 5


def test_directory_that_is_not_a_causal_lm(tmp_path):
    with pytest.raises(InputError, match="not a local causal LM"):
        model.load_hf_causal_lm(tmp_path)


def test_farma_per_token_time_below_half_of_args_loop():
    torch.manual_seed(0)
    lm = model.TinyLM(200, d=64, layers=2, heads=4).eval()
    rm = model.TinyLM(200, d=64, layers=2, heads=4).eval()
    prompts = torch.randint(0, 200, (4, 16))

    def per_token(**kw):
        t0 = time.perf_counter()
        _, c = decode.generate(lm, prompts, 16, k=10, **kw)
        return (time.perf_counter() - t0) / c.tokens

    farma = min(per_token(method="farma", rm=rm) for _ in range(2))
    args = min(per_token(method="args", rm=rm) for _ in range(2))
    assert farma < 0.5 * args
