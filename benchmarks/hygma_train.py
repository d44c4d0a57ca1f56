"""hygma-train benchmark: the batched numpy core against a loop over PettingZoo envs, and HYGMA-QMIX's
training cost against QMIX's.

    python benchmarks/hygma_train.py [--quick] [--steps N]

1. Env steps/s at B = 64 copies (pp medium, group-capture medium, lbf-lite medium): one batched
   ``core.step`` against a Python loop over 64 ``ParallelEnv`` copies (dict actions), same random actions.
   Target: ≥ 20×.
2. Training env steps/s on pp easy, HYGMA-QMIX vs QMIX, same settings (B = 8, batch 32 episodes), and
   HYGMA's clustering share of its wall time. Targets: ≤ 1.5× slower, clustering < 5 %. The two runs
   alternate ``--repeats`` times and the median ratio is quoted: on a shared 2-core machine one
   thread's CPU time for the same run varies by up to ±20 %, and one pair's ratio ranged 1.2–2.1× in one session.
   Also the matrix-product FLOPs of one update of each (HYGMA-QMIX's are ~1.65× QMIX's).
3. The projected time of a 100k-step pp easy run (target ≤ 75 s per run on 2 cores).

One torch thread; CPU time of this thread (``time.thread_time``), so other processes on a shared machine
do not inflate the numbers; quote the ratios.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "lib"), str(ROOT / "cli")]


def env_rates(env: str, batch: int, steps: int) -> tuple[float, float]:
    import numpy as np

    from paperkit.methods.hygma.envs import make_core
    from paperkit.methods.hygma.parallel import grid_parallel_env

    core = make_core(env, "medium")
    core.reset(range(batch))
    singles = [grid_parallel_env(env, "medium") for _ in range(batch)]
    for i, e in enumerate(singles):
        e.reset(seed=i)
    acts = np.random.default_rng(0).integers(0, core.n_actions, (steps, batch, core.n_agents))
    t0 = time.thread_time()
    for a in acts:
        core.step(a)
    batched = steps * batch / (time.thread_time() - t0)
    t0 = time.thread_time()
    for a in acts:
        for b, e in enumerate(singles):
            if not e.agents:
                e.reset(seed=b)
            e.step({name: int(a[b, i]) for i, name in enumerate(e.possible_agents)})
    looped = steps * batch / (time.thread_time() - t0)
    return batched, looped


def train_rate(algo: str, steps: int) -> dict:
    from paperkit.methods.hygma.envs import make_core
    from paperkit.methods.hygma.train import TrainConfig, train

    cfg = TrainConfig(algo=algo, steps=steps, k_max=2, eval_every=steps, eval_episodes=8,
                      cluster_every=max(1000, steps // 5), epsilon_anneal=steps)
    t0 = time.thread_time()
    out = train(make_core("pp", "easy"), cfg, 0, "cpu", make_core("pp", "easy"))
    cpu = time.thread_time() - t0
    steps_done = out.curves[-1]["step"]
    return {"steps_per_s": steps_done / cpu, "cluster_share": out.timing["cluster_s"] / out.timing["wall_s"]}


def update_flops(algo: str) -> float:
    """Matrix-product FLOPs (torch's flop counter: mm, addmm, bmm, the GRU's products) of one learner update on
    32 random pp easy episodes. HYGMA-QMIX's are ~1.65× QMIX's: a total ≤ 1.5× slower needs HYGMA's extra work
    (its matrix products and the HGCN's element-wise attention products) to run at a higher FLOP rate than QMIX's
    whole update does."""
    import numpy as np
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from paperkit.methods.hygma.envs import make_core
    from paperkit.methods.hygma.train import Learner, Replay, TrainConfig, rollout

    env, cfg = make_core("pp", "easy"), TrainConfig(algo=algo, k_max=2)
    learner = Learner(cfg, env.obs_dim, env.state_dim, env.n_agents, env.n_actions, "cpu")
    if cfg.uses_hgcn:
        learner.set_groups(np.arange(env.n_agents) % 2)
    replay, gen = Replay(64), torch.Generator().manual_seed(0)
    for i in range(4):
        replay.add(rollout(env, learner, list(range(8 * i, 8 * i + 8)), 1.0, gen))
    with FlopCounterMode(display=False) as counter:
        learner.update(replay.sample(32, np.random.default_rng(0)))
    return counter.get_total_flops()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="≤ 30 s: fewer env steps and a 3k-step training run")
    ap.add_argument("--steps", type=int, default=None, help="training steps per algorithm [quick 3000, full 20000]")
    ap.add_argument("--repeats", type=int, default=3, help="alternating QMIX / HYGMA-QMIX pairs; the median ratio is quoted")
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error(f"--repeats must be ≥ 1, got {args.repeats}")
    import torch

    torch.set_num_threads(1)
    env_steps = 20 if args.quick else 200
    print("1. env steps/s, B = 64 (batched core vs loop over ParallelEnv copies)")
    print(f"{'env':<15}{'batched':>12}{'loop':>12}{'ratio':>9}")
    for env in ("pp", "group-capture", "lbf-lite"):
        batched, looped = env_rates(env, 64, env_steps)
        print(f"{env:<15}{batched:>12,.0f}{looped:>12,.0f}{batched / looped:>8.1f}×")
    steps = args.steps or (3000 if args.quick else 20000)
    # warm-up: torch's and scikit-learn's first-call costs (one per process: ~20 ms of CPU for the first
    # spectral clustering) are not charged to the measured runs; 1200 steps include one clustering
    train_rate("hygma-qmix", 1200)
    print(f"\n2. training on pp easy, {steps} env steps (CPU time of one thread), {args.repeats} alternating pairs")
    pairs = []
    for _ in range(args.repeats):
        pair = {algo: train_rate(algo, steps) for algo in ("qmix", "hygma-qmix")}
        q, h = pair["qmix"]["steps_per_s"], pair["hygma-qmix"]["steps_per_s"]
        pairs.append((q / h, q, h, pair["hygma-qmix"]["cluster_share"]))
        print(f"QMIX {q:,.0f} steps/s, HYGMA-QMIX {h:,.0f} steps/s: {q / h:.2f}× slower; "
              f"clustering {pair['hygma-qmix']['cluster_share']:.1%} of HYGMA's wall time")
    ratio, q, h, share = sorted(pairs)[len(pairs) // 2]
    print(f"median: HYGMA is {ratio:.2f}× slower (target ≤ 1.5×); clustering {share:.1%} of its wall time (target < 5 %)")
    flops = {algo: update_flops(algo) for algo in ("qmix", "hygma-qmix")}
    print(f"matrix-product FLOPs of one update (32 episodes): QMIX {flops['qmix'] / 1e6:.0f} M, HYGMA-QMIX "
          f"{flops['hygma-qmix'] / 1e6:.0f} M ({flops['hygma-qmix'] / flops['qmix']:.2f}×)")
    print(f"\n3. projected pp easy 100k steps (median pair): HYGMA-QMIX {1e5 / h:.0f} s, QMIX {1e5 / q:.0f} s per run "
          f"(target ≤ 75 s)")


if __name__ == "__main__":
    main()
