"""FaRMA vs ARGS (loop / batched scoring), cached vs full recompute, batched vs one-at-a-time prompts.

Issue 17 scale: 6-layer d=256 transformers, vocab 1k, k=10, 128-token prompts. FaRMA decodes with a token-level
RM; ARGS with a scalar full-sequence RM of the same size (its loop = one RM forward over the whole sequence per
candidate, as the official scripts; batched = the k candidates in one forward over the RM's cached prefix).
The ARGS loop is timed over 16 new tokens (it takes seconds per token); the rest over 64. ``--quick``: 2 layers,
d=64, 32-token prompts, 12 new tokens.
"""

from __future__ import annotations

import argparse
import time

import torch

from paperkit.methods.rgtg import decode, model, rm


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def per_token(lm, prompts, new, repeats, **kw):
    """Best-of-``repeats`` seconds per generated token, and LM / RM calls per generation."""
    runs = [timed(lambda: decode.generate(lm, prompts, new, k=10, **kw)) for _ in range(repeats)]
    sec, (_, c) = min(runs, key=lambda r: r[0])
    return sec / c.tokens, c.lm_calls / len(prompts), c.rm_calls / len(prompts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1 if args.quick else 2)
    layers, d, new, new_loop, prompt_len, n_prompts = (2, 64, 12, 12, 32, 8) if args.quick else (6, 256, 64, 16, 128, 32)
    repeats = 2 if args.quick else 1
    torch.manual_seed(0)
    lm = model.TinyLM(1000, d=d, layers=layers, heads=4).eval()
    token_rm = model.TinyLM(1000, d=d, layers=layers, heads=4).eval()
    scalar_rm = rm.ScalarRM(model.TinyLM(1000, d=d, layers=layers, heads=4)).eval()
    prompts = torch.randint(0, 1000, (n_prompts, prompt_len))
    one = prompts[:4]
    decode.generate(lm, one, 4, method="farma", rm=token_rm, k=10)  # warm-up: first-call allocations
    rows = {
        "farma": per_token(lm, one, new_loop, repeats, method="farma", rm=token_rm),
        "args-loop": per_token(lm, one, new_loop, repeats, method="args", rm=scalar_rm),
        "args-batched": per_token(lm, one, new_loop, repeats, method="args", rm=scalar_rm, score_impl="batched"),
        f"farma ({new} tokens)": per_token(lm, one, new, repeats, method="farma", rm=token_rm),
        f"farma full recompute ({new})": per_token(lm, one, new, repeats, method="farma", rm=token_rm,
                                                   use_cache=False),
    }
    print(f"{layers} layers, d={d}, vocab 1000, k=10, {prompt_len}-token prompts, 4 prompts a batch")
    for name, (sec, lmc, rmc) in rows.items():
        print(f"{name:28s} {sec * 1e3:9.2f} ms/token  LM calls/gen {lmc:6.0f}  RM calls/gen {rmc:6.0f}")
    print(f"FaRMA / ARGS-loop    = {rows['farma'][0] / rows['args-loop'][0]:.2f}  (issue: <= 0.30)")
    print(f"FaRMA / ARGS-batched = {rows['farma'][0] / rows['args-batched'][0]:.2f}  (issue: <= 0.65)")
    full, cached = rows[f"farma full recompute ({new})"][0], rows[f"farma ({new} tokens)"][0]
    print(f"full recompute / cached = {full / cached:.2f}x  (issue: >= 4x at the issue scale; a --quick model is "
          "too small for the cache to pay)" if args.quick else f"full recompute / cached = {full / cached:.2f}x  (issue: >= 4x)")
    t_batch, _ = timed(lambda: decode.generate(lm, prompts, new, method="farma", rm=token_rm, k=10))
    t_single = sum(timed(lambda i=i: decode.generate(lm, prompts[i: i + 1], new, method="farma", rm=token_rm,
                                                     k=10))[0] for i in range(len(prompts)))
    print(f"{len(prompts)} prompts batched vs one at a time: {t_single / t_batch:.2f}x tokens/s  (issue: >= 3x)")


if __name__ == "__main__":
    main()
