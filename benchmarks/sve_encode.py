"""sve-encode: the data engine and the networks, side by side.

1. Numba rasteriser vs the numpy reference on the same stroke tables (images/s, ratio; issue: >= 10x).
2. Rendering with one worker (geometry + numba + Pillow letters + labels + questions) vs the training
   throughput of the primitive encoder on the same image size (ratio; issue: >= 3x, data never stalls).
3. Router overhead: token pooling + router forward vs the two encoders' forward (issue: <= 10%).
4. Training and ``sve-predict`` images/s at 128 and 256 px.
5. ``train_encoder`` (the library's loop: forward, losses, backward, AdamW) in float32 vs ``--dtype bfloat16``
   (autocast + channels-last), images/s and ratio at 128 px (``--threads``: those training will use).

Run with one thread (``OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1``) to compare like with like; first-call
JIT time is printed separately. ``--quick`` uses fewer images and repetitions (~30 s on a quiet core).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from paperkit.methods.sve import train as T
from paperkit.methods.sve.kernels import rasterise, rasterise_reference
from paperkit.methods.sve.model import to_tokens
from paperkit.methods.sve.render import diagram_strokes, render_diagram, render_set

CONFIG = {"widths": [32, 48, 96, 128], "channels": 64, "grid": 16, "router": "on", "concat": "channel"}


def timed(fn, reps: int) -> float:
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer images and repetitions")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1: like with like)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    n, reps, batch = (16, 1, 8) if args.quick else (64, 3, 32)
    tables = [diagram_strokes(np.random.default_rng(k), 128, 4)[1] for k in range(n)]
    t0 = time.perf_counter()
    rasterise(tables[0], 128, 128)
    print(f"numba first call (JIT or cache load): {time.perf_counter() - t0:.2f} s")
    nb = timed(lambda: [rasterise(t, 128, 128) for t in tables], reps)
    ref = timed(lambda: [rasterise_reference(t, 128, 128) for t in tables], reps)
    print(f"rasteriser, {n} diagrams of 128 px: numba {n / nb:8.1f} img/s  numpy {n / ref:8.1f} img/s  "
          f"ratio {ref / nb:5.1f}x (target >= 10x)")

    torch.manual_seed(0)
    models = T.build_models(CONFIG)
    enc, glob, router = models["encoder"], models["global"], models["router"]
    for size in (128, 256):
        render = timed(lambda size=size: [render_diagram(0, k, size, 4) for k in range(n)], reps)
        data = render_set(1, batch, size=size)
        idx = np.arange(batch)

        def step(data=data, idx=idx):
            enc.train()
            out = enc(T.images_tensor(data["images"][idx]))
            loss = sum(T.primitive_losses(out, T.targets(data, idx)).values())
            loss.backward()

        step()
        train = timed(step, reps)
        enc.eval()
        x = T.images_tensor(data["images"])
        with torch.no_grad():
            pred = timed(lambda d=data: T.predict(enc, d["images"], batch_size=batch, device=torch.device("cpu")), reps)
            fwd = timed(lambda x=x: (enc.router_levels(x), glob.tokens(x, 16)), reps)
            levels = enc.router_levels(x)
            q = glob.tokens(x, 16)
            rt = timed(lambda levels=levels, q=q: router(q, [to_tokens(v, 16) for v in levels]), reps)
        print(f"{size} px: render (1 worker) {n / render:7.1f} img/s  train {batch / train:6.1f} img/s  "
              f"ratio {(n / render) / (batch / train):5.1f}x (target >= 3x)  "
              f"predict {batch / pred:6.1f} img/s")
        print(f"{size} px: router + token pooling {rt * 1e3:7.1f} ms vs encoders' forward {fwd * 1e3:7.1f} ms  "
              f"overhead {100 * rt / fwd:5.1f}% (target <= 10%)")

    # 5. float32 vs bfloat16 training, the same data and start; the first epoch of each warms up its kernels.
    data = render_set(2, 2 * batch, size=128)
    rates = {}
    for dtype in T.TRAIN_DTYPES:
        def fit(dtype=dtype):
            torch.manual_seed(0)
            T.train_encoder(T.build_models(CONFIG)["encoder"], data, kind="primitives", epochs=1, batch_size=batch,
                            lr=2e-3, seed=0, device=torch.device("cpu"), dtype=dtype)
        fit()
        rates[dtype] = len(data["images"]) / timed(fit, reps)
    print(f"128 px: train_encoder float32 {rates['float32']:6.1f} img/s  bfloat16 {rates['bfloat16']:6.1f} img/s  "
          f"ratio {rates['bfloat16'] / rates['float32']:4.2f}x ({torch.get_num_threads()} threads)")


if __name__ == "__main__":
    main()
