"""pigdreamer-train benchmark: the batched env core against gymnasium's SyncVectorEnv, PIG's gradient step
against SafeDreamer's (unprivileged), and the time split of a training run.

    python benchmarks/pigdreamer_train.py [--quick] [--steps N]

1. Env steps/s at B = 16 on HazardNav-PO (vector) and PointGoal-PO: one batched ``core.step`` against
   ``gymnasium.vector.SyncVectorEnv`` over 16 ``gym.make`` copies of the same env, same random actions,
   fastest of 3 passes each. Target: ≥ 20×.
2. Gradient-step time (world model + imagination + actor/critics), pig vs unprivileged, default sizes
   (batch 16 × 32, 256 imagination starts, H = 15). Target: ≤ 1.6× (paper: +28% training time).
3. A pig run on HazardNav-PO (vector) at the default train ratio: CPU time split by phase (env, updates,
   evaluation) and its projection to 20k steps (target ≤ 10 min on 2 cores); with --steps ≥ 20000 and no
   --quick, also PPO-Lagrangian's final return beside pig's at the same budget.

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


def env_rates(task: str, env_id: str, batch: int, steps: int) -> tuple[float, float]:
    import gymnasium as gym
    import numpy as np

    from paperkit.methods.pigdreamer.envs import CORES, register_envs

    register_envs()
    core = CORES[task](batch)
    core.reset(np.arange(batch))
    vec = gym.vector.SyncVectorEnv([lambda: gym.make(env_id) for _ in range(batch)])
    vec.reset(seed=0)
    rng = np.random.default_rng(0)
    acts = (rng.integers(0, 5, (steps, batch)) if core.discrete else rng.uniform(-1, 1, (steps, batch, 2)).astype(np.float32))
    core.step(acts[0])                       # numba compiled before timing (its JIT time is not a step)

    def best_rate(step) -> float:
        """Steps/s of the fastest of 3 passes (timeit's rule: slower passes measure the machine's other load)."""
        times = []
        for _ in range(3):
            t0 = time.thread_time()
            for a in acts:
                step(a)
            times.append(time.thread_time() - t0)
        return steps * batch / min(times)

    return best_rate(core.step), best_rate(vec.step)


def grad_step_time(variant: str, reps: int) -> float:
    import torch

    from paperkit.methods.pigdreamer.agent import AgentConfig
    from paperkit.methods.pigdreamer.train import TrainConfig, Trainer

    cfg = TrainConfig(steps=800, prefill=800, eval_every=10**9, agent=AgentConfig(variant=variant))
    tr = Trainer(cfg, 0)
    tr.run_until(800)
    gen = torch.Generator().manual_seed(0)
    tr.agent.update(tr.replay.sample(16, 32, gen), gen)     # warm-up
    t0 = time.thread_time()
    for _ in range(reps):
        tr.agent.update(tr.replay.sample(16, 32, gen), gen)
    return (time.thread_time() - t0) / reps


def run_split(variant: str, steps: int) -> dict:
    import numpy as np

    from paperkit.methods.pigdreamer.run import PigdreamerTrainSettings

    s = PigdreamerTrainSettings(variant=variant, steps=steps, eval_every=max(steps // 2, 1),
                                prefill=min(1000, steps // 2))
    cfg = s.train_config()
    if variant == "ppo-lag":
        from paperkit.methods.pigdreamer.ppo import PPOLagTrainer as T
    else:
        from paperkit.methods.pigdreamer.train import Trainer as T
    tr = T(cfg, 0)
    t0 = time.thread_time()
    tr.run_until(steps)
    cpu = time.thread_time() - t0
    last = max(e["step"] for e in tr.evals)
    final = [e for e in tr.evals if e["step"] == last]
    return {"cpu_s": cpu, **tr.timing, "updates": tr.updates, "return": float(np.mean([e["return"] for e in final])),
            "cost": float(np.mean([e["cost"] for e in final]))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="≤ 30 s: fewer env steps, 2 gradient steps, a 1.2k-step run")
    ap.add_argument("--steps", type=int, default=None, help="env steps of the timed pig run [quick 1200, full 4000]")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    env_steps = 200 if args.quick else 1000
    print("1. env steps/s, B = 16 (batched core vs gymnasium SyncVectorEnv over gym.make copies)")
    print(f"{'env':<14}{'batched':>12}{'SyncVectorEnv':>15}{'ratio':>9}")
    for task, env_id in (("hazardnav", "paperkit/HazardNav-v0"), ("pointgoal", "paperkit/PointGoalPO-v0")):
        batched, looped = env_rates(task, env_id, 16, env_steps)
        print(f"{task:<14}{batched:>12,.0f}{looped:>15,.0f}{batched / looped:>8.1f}×")

    reps = 2 if args.quick else 10
    pig, unp = grad_step_time("pig", reps), grad_step_time("unprivileged", reps)
    print("\n2. gradient step (world model + imagination + actor/critics), CPU s per step, one thread")
    print(f"   pig {pig:.3f} s   unprivileged {unp:.3f} s   ratio {pig / unp:.2f}× (target ≤ 1.6×; paper +28%)")

    steps = args.steps or (1200 if args.quick else 4000)
    out = run_split("pig", steps)
    # 20k steps at the defaults: (20000 − prefill) × envs·ratio/(batch·len) / envs updates, each `pig` s of CPU,
    # plus this run's non-update CPU per env step
    updates_20k = (20000 - 1000) * 32 / (16 * 32)
    other = max(out["cpu_s"] - pig * out["updates"], 0.0) / steps
    wall = out["env_s"] + out["update_s"] + out["eval_s"]
    print(f"\n3. pig on HazardNav-PO (vector), {steps} env steps, {out['updates']} updates: CPU {out['cpu_s']:.1f} s; "
          f"share of wall time: env {out['env_s'] / wall:.1%}, updates {out['update_s'] / wall:.1%}, "
          f"evaluation {out['eval_s'] / wall:.1%}")
    print(f"   projected 20k steps: {(pig * updates_20k + other * 20000) / 60:.1f} min of one core "
          f"({updates_20k:.0f} updates; target ≤ 10 min)")
    if steps >= 20000 and not args.quick:
        ppo = run_split("ppo-lag", steps)
        print(f"   return at {steps} steps: pig {out['return']:.2f} (cost {out['cost']:.2f}) vs PPO-Lag "
              f"{ppo['return']:.2f} (cost {ppo['cost']:.2f})")


if __name__ == "__main__":
    main()
