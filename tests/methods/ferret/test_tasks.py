"""Tasks: Rouge-L against hand values, the instruct task split, JSONL parsing, a tiny Hugging Face model."""

import json

import numpy as np
import pytest
import torch

from paperkit.core.errors import InputError
from paperkit.methods import ferret
from paperkit.methods.ferret.tasks import lcs_length


def test_rouge_l_hand_values():
    # LCS("the cat sat on the mat", "the cat on the mat") = 5 → P = 5/6, R = 1, F = 10/11
    assert ferret.rouge_l("the cat sat on the mat", "the cat on the mat") == pytest.approx(10 / 11)
    assert ferret.rouge_l("abc", "abc", unit="char") == 1.0
    assert ferret.rouge_l("", "abc") == 0.0
    assert ferret.rouge_l("cba", "abc", unit="char") == pytest.approx(1 / 3)


def test_lcs_matches_brute_force():
    from itertools import combinations

    rng = np.random.default_rng(0)
    for _ in range(30):
        a, b = list(rng.integers(0, 3, 6)), list(rng.integers(0, 3, 5))
        best = max((n for n in range(len(a) + 1) for sub in combinations(a, n)
                    if _is_subseq(list(sub), b)), default=0)
        assert lcs_length(a, b) == best


def _is_subseq(s, t):
    it = iter(t)
    return all(x in it for x in s)


def test_instruct_task_splits_by_family():
    task = ferret.instruct_task(n_clients=12, seed=0, n_train=600, n_test=60)
    assert task.n_clients == 12 and sum(task.client_sizes) == 600
    # client c holds only family c mod 6: its batches carry one task tag
    gen = torch.Generator().manual_seed(0)
    for c in (0, 7):
        ids, _ = task.sample_batch(c, 16, gen)
        assert len({tuple(row[:2].tolist()) for row in ids}) == 1
    model = task.make_model()
    assert set(task.evaluate(model)) == {"test_loss", "test_acc"}


def test_instruct_task_learns_under_ferret():
    torch.set_num_threads(1)
    task = ferret.instruct_task(n_clients=6, seed=0, n_train=600, n_test=60, d_model=32, n_layers=1)
    cfg = ferret.FedConfig(n_clients=6, fraction=0.5, rounds=4, local_steps=5, lr=0.003, optimizer="adam", k=200,
                      batch_size=16, server_lr=1.0)
    _, rows = ferret.run_federated(task, cfg)
    assert rows[-1]["test_loss"] < rows[0]["test_loss"]


def test_read_instruction_jsonl_errors(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"instruction": "a", "output": "b"}\nnot json\n')
    with pytest.raises(InputError, match="line 2 is not valid JSON"):
        ferret.read_instruction_jsonl(p)
    p.write_text('{"instruction": "a", "output": "b"}\n{"instruction": "a", "output": 3}\n')
    with pytest.raises(InputError, match="'output'"):
        ferret.read_instruction_jsonl(p)
    p.write_text('{"instruction": "a", "output": "b"}\n')
    with pytest.raises(InputError, match="at least 2"):
        ferret.read_instruction_jsonl(p)


def test_empty_client_shards_are_refused(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text("".join(json.dumps({"instruction": "i", "output": str(i)}) + "\n" for i in range(5)))
    with pytest.raises(InputError, match="clients"):
        ferret.jsonl_task(str(p), n_clients=10)


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    transformers = pytest.importorskip("transformers")
    d = tmp_path_factory.mktemp("tiny-gpt2")
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=260, n_positions=64, n_embd=16, n_layer=1, n_head=2)
    transformers.GPT2LMHeadModel(cfg).save_pretrained(d)
    return d


def test_hugging_face_causal_lm_from_a_folder(tiny_gpt2, tmp_path):
    torch.set_num_threads(1)
    rows = [{"instruction": "Copy", "input": w, "output": w} for w in ["ab", "cd", "ef", "gh", "ij", "kl"] * 2]
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    task = ferret.jsonl_task(str(p), n_clients=2, alpha=None, model_dir=str(tiny_gpt2))
    fed = ferret.Federation(task, ferret.FedConfig(n_clients=2, fraction=1.0, rounds=2, local_steps=2, lr=0.01, k=50,
                                         batch_size=2))
    assert fed.dim == sum(p.numel() for p in fed.model.parameters())
    s0 = fed.initial_state()
    s1, row, msgs = fed.run_round(s0, [])
    assert all(m.uplink_floats == 50 for m in msgs)
    assert not torch.equal(s0.weights, s1.weights)
    assert 0.0 <= fed.final_metrics(s1.weights)["rouge_l"] <= 1.0
