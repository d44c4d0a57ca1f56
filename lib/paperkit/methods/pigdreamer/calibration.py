"""Does the world model read the cost the deployed policy really gets? A check of a trained run.

The Lagrangian only sees imagined cost. This rolls out the deployed policy for real episodes (the evaluation
seeds of :func:`~paperkit.methods.pigdreamer.train.evaluate`, observations only for the policy), then reads
the cost head over every window of ``horizon`` steps in them, per horizon step k = 1..H:

* ``real``: the cost the env gave at step t + k;
* ``posterior``: the cost head on the filtered states at t + k (the states it is trained on);
* ``open_loop``: the priors stepped from the posterior at t with the actions really taken next;
* ``imagined``: the agent's own imagination from t (its actor picks the actions: what training uses).

``open_loop`` below ``real`` is model error under the real actions; ``open_loop`` near ``real`` but
``imagined`` below is the actor steering imagination where the model sees less cost. The real actions are
the actor's own choices too, so model error that the actor seeks out shows in ``open_loop`` as well: with
``behaviour`` (e.g. :class:`~paperkit.methods.pigdreamer.train.RandomPolicy`) the episodes come from a policy
that does not read the model, and comparing the two ``open_loop`` ratios separates the model's error in
general from the error on the actions its actor picks. For the privileged
variants, two mixed readings say which prior loses it: the naive posterior with the privileged prior
(``open_loop_privileged_prior``), and the naive prior with the privileged posterior
(``open_loop_naive_prior``). Reading the privileged posterior needs the env's privileged vector, as training
did; the policy never sees it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from paperkit.core.errors import InputError
from paperkit.methods.pigdreamer.agent import Agent, DeployedPolicy
from paperkit.methods.pigdreamer.train import Replay, evaluate

READINGS = ("real", "posterior", "open_loop", "imagined")
CHUNK = 64          # episodes read at once: ~135 MB of imagined head features at the defaults' sizes
MIXED = ("open_loop_privileged_prior", "open_loop_naive_prior")


def window_mask(is_first: torch.Tensor, horizon: int) -> torch.Tensor:
    """(copies, windows, H) bool: step t + k (k = 1..H) of the window starting at t is in t's episode, i.e. no
    step t+1..t+k starts a new one; windows start at t = 0 .. steps − 1 − H of the (copies, steps) stream."""
    steps = is_first.shape[1]
    t = torch.arange(steps - horizon)
    new_episode = torch.stack([is_first[:, t + k].int() for k in range(1, horizon + 1)], -1).cummax(-1).values
    return new_episode == 0


@torch.no_grad()
def cost_calibration(agent: Agent, core: Any, episodes: int, seed: int, greedy: bool = False,
                     behaviour: Any = None) -> tuple[list[dict], dict]:
    """The evaluation's per-episode rows (as :func:`evaluate` gives them), and the calibration: the readings'
    per-step cost per horizon step, their means scaled to one episode, and each one's ratio to the real cost.
    ``core`` has ``episodes`` copies and reports the privileged vector where the agent's world model reads it.
    ``behaviour`` is the policy that acts in the episodes (:class:`DeployedPolicy`'s interface); by default the
    agent's own deployed policy. ``imagined`` always uses the agent's actor, so under another behaviour its
    ratio to the real cost compares two different policies' costs."""
    length = int(core.horizon)
    if length < 1:
        raise InputError("the cost calibration needs an env with a known episode length (gymnasium max_episode_steps)")
    horizon = agent.cfg.horizon
    policy = DeployedPolicy(agent) if behaviour is None else behaviour
    record = Replay(episodes, length + 1, core.obs_shape, core.priv_dim, core.n_actions)
    rows = evaluate(policy, core, episodes, seed, greedy=greedy, record=record)
    steps = record.filled
    if steps - 1 - horizon < 0:
        raise InputError(f"episodes of {steps - 1} steps are shorter than the imagination horizon {horizon}")
    gen = torch.Generator().manual_seed(seed)
    privileged = agent.privileged
    keys = READINGS + (MIXED if privileged else ())
    sums, counts = {key: torch.zeros(horizon, dtype=torch.float64) for key in keys}, torch.zeros(horizon)
    for lo in range(0, episodes, CHUNK):        # bounded memory: windows × H imagined states per chunk
        data = {k: v[lo:lo + CHUNK, :steps] for k, v in record.data.items()}
        part, count = _chunk_readings(agent, data, horizon, privileged, gen)
        counts += count
        for key in keys:
            sums[key] += part[key]
    readings = {key: (sums[key] / counts).tolist() for key in keys}
    per_episode = {key: float(np.mean(v)) * length for key, v in readings.items()}
    real = per_episode["real"]
    return rows, {"horizon": horizon, "windows": int(counts[-1]), "episode_length": length,
            "per_episode": per_episode,
            "ratio_to_real": {key: (v / real if real > 0 else None) for key, v in per_episode.items() if key != "real"},
            "per_step": [{"k": k + 1, **{key: v[k] for key, v in readings.items()}} for k in range(horizon)]}


def _chunk_readings(agent: Agent, data: dict, horizon: int, privileged: bool,
                    gen: torch.Generator) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Per horizon step, the readings summed over the valid windows of these recorded episodes, and the count."""
    n, steps = data["cost"].shape
    _, _, starts, _ = agent.world_model_loss(data, gen)
    post = [None if s is None else s.view(n, steps, -1) for s in starts]
    t = torch.arange(steps - horizon)
    valid = window_mask(data["is_first"], horizon)          # (n, windows, H)

    def flat(x: torch.Tensor) -> torch.Tensor:
        return x.reshape(-1, x.shape[-1])

    h, z = flat(post[0][:, t]), flat(post[1][:, t])
    hp, zp = (flat(post[2][:, t]), flat(post[3][:, t])) if privileged else (None, None)
    imagined = agent.predicted_cost(agent.imagine((h, z, hp, zp), gen)["head"])[1:]     # (H, N)
    sums: dict[str, list[float]] = {key: [] for key in READINGS + (MIXED if privileged else ())}
    for k in range(1, horizon + 1):
        action = flat(data["action"][:, t + k])
        h, z, _ = agent.rssm.img_step(h, z, action, gen)
        naive_post = flat(torch.cat([post[0][:, t + k], post[1][:, t + k]], -1))
        naive_prior = torch.cat([h, z], -1)
        if privileged:
            hp, zp, _ = agent.priv_rssm.img_step(hp, zp, action, gen)
            priv_post = flat(torch.cat([post[2][:, t + k], post[3][:, t + k]], -1))
            priv_prior = torch.cat([hp, zp], -1)
            heads = {"posterior": (naive_post, priv_post), "open_loop": (naive_prior, priv_prior),
                     "open_loop_privileged_prior": (naive_post, priv_prior),
                     "open_loop_naive_prior": (naive_prior, priv_post)}
        else:
            heads = {"posterior": (naive_post,), "open_loop": (naive_prior,)}
        mask = valid[..., k - 1].reshape(-1)
        sums["real"].append(float(data["cost"][:, t + k].reshape(-1)[mask].double().sum()))
        sums["imagined"].append(float(imagined[k - 1][mask].double().sum()))
        for key, parts in heads.items():
            sums[key].append(float(agent.predicted_cost(torch.cat(parts, -1))[mask].double().sum()))
    count = valid.reshape(-1, horizon).sum(0).float()
    return {key: torch.tensor(v, dtype=torch.float64) for key, v in sums.items()}, count
