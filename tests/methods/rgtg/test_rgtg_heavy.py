"""Acceptance at the examples' scale (rgtg-toy and rgtg-train-rm defaults), 3 seeds: minutes of training."""

import numpy as np
import pytest
import torch

from paperkit.methods.rgtg import decode, model, rm, toy

torch.set_num_threads(1)
pytestmark = pytest.mark.heavy


def _run(seed):
    task = toy.make_task(vocab=20, length=12, seed=seed)
    rng = np.random.default_rng(seed)
    ch, rj = (rm.Seqs.from_lists(a) for a in toy.preference_pairs(task, 4000, rng, min_len=4))
    hc, hr = (rm.Seqs.from_lists(a) for a in toy.preference_pairs(task, 800, rng, min_len=4))
    nets = {}
    for loss in ("farma", "bt-full"):
        torch.manual_seed(seed)
        net = model.TinyLM(20, d=32, layers=1, heads=4)
        model.init_scale(net)
        rm.train_rm(net, loss=loss, iters=7, lr=2e-3, batch=64, min_prefix=4, seed=seed, chosen=ch, rejected=rj,
                    prefixes=ch, constraint_weight=0.3)
        nets[loss] = net.eval()
    lm = rm.MarkovLM(task.log_trans)
    prompts = torch.as_tensor(toy.sample(task, 200, 2, rng))

    def rewards(method, **kw):
        out, _ = decode.generate(lm, prompts, 10, method=method, k=10, seed=seed, **kw)
        return np.array([toy.true_reward(task, s) for s in torch.cat([prompts, out], 1).numpy()])

    opt = np.mean([toy.optimum(task, p, k=10) for p in prompts.tolist()])
    ref = rewards("ref")
    farma = rewards("farma", rm=nets["farma"])
    args = rewards("args", rm=nets["farma"])
    return {"gap": rm.constraint_gap(nets["farma"], hc, 4), "gap_bt": rm.constraint_gap(nets["bt-full"], hc, 4),
            "acc": rm.pair_accuracy(nets["farma"], hc, hr), "farma": farma, "args": args,
            "closed": (farma.mean() - ref.mean()) / (opt - ref.mean())}


@pytest.fixture(scope="module")
def runs():
    return [_run(s) for s in (0, 1, 2)]


def test_constraint_pair_accuracy_and_farma_vs_args(runs):
    for r in runs:
        assert r["gap"] <= r["gap_bt"] / 5 and r["acc"] >= 0.70
        se = np.sqrt(r["farma"].var(ddof=1) / 200 + r["args"].var(ddof=1) / 200)
        assert r["farma"].mean() >= r["args"].mean() - 2 * se


@pytest.mark.xfail(strict=True, reason="the max constraint shrinks the RM's scale: FaRMA closes ~3-8% at w = 1 "
                                       "(examples/rgtg/README.md)")
def test_farma_closes_30_percent_of_the_gap(runs):
    assert np.mean([r["closed"] for r in runs]) >= 0.30
