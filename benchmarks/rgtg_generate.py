"""FaRMA vs ARGS (loop / batched scoring), cached vs full-recompute, batched vs one-at-a-time prompts.

Issue 17 scale: 6-layer d=256 transformer, vocab 1k, k=10, 64 new tokens. ``--quick``: 2 layers, d=64, 16 tokens.
"""

from __future__ import annotations

import argparse
import time

import torch

from paperkit.methods.rgtg import decode, model


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1 if args.quick else 2)
    layers, d, new, prompt_len, n_prompts = (2, 64, 12, 32, 8) if args.quick else (6, 256, 64, 128, 32)
    torch.manual_seed(0)
    lm = model.TinyLM(1000, d=d, layers=layers, heads=4).eval()
    rm = model.TinyLM(1000, d=d, layers=layers, heads=4).eval()
    scorer = decode.token_rm_scorer(rm)
    prompts = torch.randint(0, 1000, (n_prompts, prompt_len))
    one = prompts[:4]
    decode.generate(lm, one, 4, method="farma", rm=rm, k=10)  # warm-up: first-call allocations
    rows = {}
    for name, kw in [("farma", dict(method="farma", rm=rm)),
                     ("args-loop", dict(method="args", seq_rm=scorer)),
                     ("args-batched", dict(method="args", seq_rm=scorer, score_impl="batched")),
                     ("farma-full-recompute", dict(method="farma", rm=rm, use_cache=False))]:
        runs = [timed(lambda kw=kw: decode.generate(lm, one, new, k=10, **kw)) for _ in range(2)]
        sec, (_, c) = min(runs, key=lambda r: r[0])
        rows[name] = (sec / c.tokens, c.lm_calls / len(one), c.rm_calls / len(one))
    for name, (per_tok, lmc, rmc) in rows.items():
        print(f"{name:22s} {per_tok * 1e3:8.2f} ms/token  LM calls/gen {lmc:6.0f}  RM calls/gen {rmc:6.0f}")
    print(f"FaRMA / ARGS-loop    = {rows['farma'][0] / rows['args-loop'][0]:.2f}  (issue: <= 0.30)")
    print(f"FaRMA / ARGS-batched = {rows['farma'][0] / rows['args-batched'][0]:.2f}  (issue: <= 0.65)")
    print(f"full-recompute / cached = {rows['farma-full-recompute'][0] / rows['farma'][0]:.2f}x  (issue: >= 4x)")
    t_batch, _ = timed(lambda: decode.generate(lm, prompts, new, method="farma", rm=rm, k=10))
    t_single = sum(timed(lambda i=i: decode.generate(lm, prompts[i : i + 1], new, method="farma", rm=rm,
                                                     k=10))[0] for i in range(len(prompts)))
    print(f"{len(prompts)} prompts batched vs one at a time: {t_single / t_batch:.2f}x tokens/s  (issue: >= 3x)")


if __name__ == "__main__":
    main()
