"""``paperkit ferret-train``: simulate Ferret (Shu et al., ICML 2025) and its baselines in one process."""

from __future__ import annotations

import click

from paperkit_cli import options


class FiniteFloat(click.FloatRange):
    """A float option that refuses NaN and ±inf (click's FloatRange lets NaN through every bound)."""

    name = "float"

    def convert(self, value, param, ctx):
        import math

        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return rv


def finite(min=None, max=None, min_open=False, max_open=False) -> FiniteFloat:  # noqa: A002 - click's names
    return FiniteFloat(min=min, max=max, min_open=min_open, max_open=max_open)


# Shared by ferret-train, ferret-server and ferret-client: the data and model every party must agree on.
task_options = options._compose(
    click.option("--task", default="digits", show_default=True, metavar="TASK",
                 help="digits (sklearn digits, MLP), instruct (generated instruction families, small "
                      "transformer), or jsonl:PATH (records with instruction/input/output[/category])."),
    click.option("--model", "model_dir", default=None, type=click.Path(file_okay=False), metavar="DIR",
                 help="A Hugging Face causal LM saved in a local folder (instruct/JSONL tasks); no downloads."),
    click.option("--clients", type=click.IntRange(min=1), default=20, show_default=True,
                 help="Number of clients (data holders)."),
    click.option("--dirichlet", type=finite(min=0.0, min_open=True), default=0.5, show_default=True,
                 help="Dirichlet alpha of the label/category skew (digits, JSONL with categories). The instruct "
                      "task splits by task family instead."),
    click.option("--iid", is_flag=True, help="Split the data IID instead of by Dirichlet skew."),
    click.option("--d-model", type=click.IntRange(min=8), default=64, show_default=True,
                 help="Width of the built-in transformer (instruct/JSONL without --model)."),
    click.option("--layers", "n_layers", type=click.IntRange(min=1), default=2, show_default=True,
                 help="Layers of the built-in transformer."),
)

algo_options = options._compose(
    click.option("--algo", type=click.Choice(["ferret", "fedavg", "fedzo", "fedkseed"]), default="ferret",
                 show_default=True, help="Ferret, or a baseline: FedAvg, FedZO, FedKSeed."),
    click.option("--fraction", type=finite(), default=0.25, show_default=True,
                 help="Share of clients sampled each round, in (0, 1]."),
    click.option("--rounds", type=click.IntRange(min=1), default=30, show_default=True, help="Communication rounds."),
    click.option("--local-steps", "-T", type=click.IntRange(min=1), default=10, show_default=True,
                 help="Local steps per round (first-order for Ferret/FedAvg, zeroth-order for FedZO/FedKSeed)."),
    click.option("--lr", type=finite(), default=0.5, show_default=True, help="Local learning rate eta."),
    click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True,
                 help="Examples per local step."),
    click.option("--optimizer", type=click.Choice(["sgd", "adam"]), default="sgd", show_default=True,
                 help="Local first-order optimizer (fresh each round)."),
    click.option("--server-lr", type=finite(), default=1.0, show_default=True,
                 help="Server learning rate on the mean update (paper: 10 on NI, 3 on Dolly)."),
    click.option("--momentum", type=finite(0.0, 1.0, max_open=True), default=0.0, show_default=True,
                 help="Server momentum on the mean update."),
    click.option("--k", "k", type=int, default=100, show_default=True,
                 help="Ferret: total projection coordinates per client per round, split over blocks."),
    click.option("--blocks", default="auto", show_default=True, metavar="auto|tensor|L",
                 help="Ferret blocks: auto (runs of tensors, as the official code), tensor, or L equal blocks."),
    click.option("--alloc", type=click.Choice(["norm", "uniform", "dim"]), default="norm", show_default=True,
                 help="How K is split over blocks: by update norm, equally, or by block size."),
    click.option("--clip", type=finite(), default=None, metavar="NORM",
                 help="Clip each client's reconstructed update to this norm (official code: 10)."),
    click.option("--zo-eps", type=finite(), default=1e-3, show_default=True,
                 help="Perturbation size of the zeroth-order baselines."),
    click.option("--kseed-pool", type=click.IntRange(min=1), default=4096, show_default=True,
                 help="FedKSeed: number of candidate seeds."),
)


def set_threads(jobs: int) -> None:
    """torch threads: 1 by default (small models lose time to thread hand-offs), 0 = one per core."""
    import os

    import torch

    torch.set_num_threads(jobs if jobs > 0 else (os.cpu_count() or 1))


def task_spec(task, model_dir, clients, dirichlet, iid, d_model, n_layers, seed) -> dict:
    """What every party must agree on (the Flower fingerprint and the task builder's arguments)."""
    import os

    return {"task": task, "model": os.path.basename(os.path.normpath(model_dir)) if model_dir else None,
            "clients": clients, "dirichlet": None if iid else dirichlet, "d_model": d_model, "layers": n_layers,
            "seed": seed}


def build_task(task, model_dir, clients, dirichlet, iid, d_model, n_layers, seed):
    from paperkit.methods.ferret import build_task as build

    return build(task, n_clients=clients, alpha=None if iid else dirichlet, seed=seed, model_dir=model_dir,
                 d_model=d_model, n_layers=n_layers)


def fed_config(**kw):
    from paperkit.methods.ferret import FedConfig

    return FedConfig(algo=kw["algo"], n_clients=kw["clients"], fraction=kw["fraction"], rounds=kw["rounds"],
                     local_steps=kw["local_steps"], lr=kw["lr"], batch_size=kw["batch_size"],
                     optimizer=kw["optimizer"], server_lr=kw["server_lr"], momentum=kw["momentum"], k=kw["k"],
                     blocks=kw["blocks"], alloc=kw["alloc"], clip=kw["clip"], zo_eps=kw["zo_eps"],
                     kseed_pool=kw["kseed_pool"], seed=kw["seed"], device=kw.get("device", "cpu")).validate()


def save_round(run, fstate, rows, prev, algo) -> None:
    """Checkpoint after a round: deterministic state in checkpoints/state.pt, seconds in timing.csv.

    Written with SIGINT held back (see ``ferret.checkpoint.interrupt_safe``): Ctrl-C during the write
    stops the run right after it, with exit 130 and a whole checkpoint."""
    import json

    import torch

    from paperkit.core import tables
    from paperkit.methods.ferret.checkpoint import interrupt_safe, split_timings
    from paperkit.methods.ferret.flower import encode_rounds

    data, timing = split_timings(rows)
    header, payload = encode_rounds([(rows[-1]["round"] - 1, prev)], algo) if rows else encode_rounds([], algo)
    with interrupt_safe():
        run.save_checkpoint("state.pt", {"state": fstate.to_checkpoint(), "rows": json.dumps(data),
                                         "prev_header": torch.from_numpy(header),
                                         "prev_payload": torch.from_numpy(payload)})
        tables.write_table(run.file("timing.csv"), timing)


def load_round(run, fed, algo):
    """The state, rows (seconds rejoined from timing.csv) and last messages of a checkpointed run."""
    import json

    from paperkit.core import tables
    from paperkit.methods.ferret import ServerState
    from paperkit.methods.ferret.checkpoint import join_timings
    from paperkit.methods.ferret.flower import decode_rounds

    saved = run.load_checkpoint("state.pt")
    fstate = ServerState.from_checkpoint(saved["state"], fed.device)
    rows = json.loads(saved["rows"])
    if run.file("timing.csv").exists():
        rows = join_timings(rows, tables.read_table(run.file("timing.csv")).records())
    decoded = decode_rounds([saved["prev_header"].numpy(), saved["prev_payload"].numpy()], algo)
    return fstate, rows, (decoded[0][1] if decoded else [])


def write_results(run, fed, state, rows, *, extra: dict | None = None) -> dict:
    """history.csv (deterministic), timing.csv (seconds), summary.json, curves.png, model.pt."""
    from paperkit.core import io, plots, tables
    from paperkit.methods.ferret import add_cumulative
    from paperkit.methods.ferret.checkpoint import split_timings
    from paperkit.methods.ferret.plots import curves_figure

    rows = add_cumulative(rows)
    # seconds vary from run to run; they live apart so the same seed gives the same history bytes
    data, timing = split_timings(rows)
    tables.write_table(run.file("history.csv"), data)
    tables.write_table(run.file("timing.csv"), timing)
    final = fed.final_metrics(state.weights)
    last = rows[-1]
    per_round = sum(r["uplink_floats"] for r in rows) / len(rows)
    summary = {"algo": fed.cfg.algo, "task": fed.task.name, "params": fed.dim, "blocks": fed.blocks.n_blocks,
               "rounds": len(rows), "config": fed.cfg.to_dict(),
               "final": {"test_loss": last["test_loss"], "test_acc": last["test_acc"], **final},
               "totals": {"uplink_bytes": last["cum_uplink_bytes"], "uplink_floats_per_client_round": per_round,
                          "uplink_fraction_of_d": per_round / fed.dim},
               **(extra or {})}
    io.write_json(run.file("summary.json"), summary)
    io.save_torch(run.file("model.pt"), {"weights": state.weights.cpu(), "round": state.round})
    plots.save_figure(curves_figure(rows, title=f"{fed.cfg.algo} on {fed.task.name}"), run.file("curves.png"))
    from paperkit.methods.ferret.checkpoint import TIMING_KEYS

    summary["seconds"] = {k: sum(r.get(k, 0.0) for r in rows) for k in TIMING_KEYS}
    return summary


def round_line(row: dict) -> str:
    return (f"round {row['round']:>3}  {row['algo']:<8} train {row['train_loss']:.4f}  test {row['test_loss']:.4f}  "
            f"acc {row['test_acc']:.4f}  up {row['uplink_floats']:.0f} floats/client  {row['wall_s']:.2f}s")


@options.command("ferret-train", short_help="Simulate Ferret federated tuning vs FedAvg/FedZO/FedKSeed.")
@algo_options
@task_options
@options.seed_option
@options.jobs_option
@options.device_option
@options.run_dir_options
def cli(run_dir, resume, force, seed, jobs, device, **kw):
    """Simulate federated full-parameter tuning with Ferret or a baseline, in one process.

    Each round samples --fraction of --clients; each runs --local-steps steps from the global model.
    Ferret projects its update on K shared-seed bases (block-wise, K_l by --alloc) and uploads only
    (seed, gamma); FedAvg and FedZO upload the full update; FedKSeed uploads (seed index, scalar)
    pairs. The server rebuilds, averages and steps with --server-lr. Writes to DIR: history.csv
    (per round: losses, accuracy, uplink/downlink floats and bytes, local, projection and
    reconstruction seconds), summary.json, curves.png (loss/accuracy vs round and vs uplink bytes),
    model.pt, and a checkpoint every round (--resume continues an interrupted run). Prints one line
    per round on stderr and a JSON summary on stdout.

    \b
    Examples:
      $ paperkit ferret-train --algo ferret --k 200 --rounds 30 --run-dir runs/ferret
      $ paperkit ferret-train --algo fedavg --rounds 30 --run-dir runs/fedavg
      $ paperkit ferret-train --task instruct --clients 10 --fraction 0.3 --lr 0.003 --optimizer adam --rounds 5 --run-dir runs/instr
    """
    import json

    set_threads(jobs)

    from paperkit.core.errors import PaperkitError
    from paperkit.core.progress import progress
    from paperkit.methods.ferret import Federation
    from paperkit_cli import runtime, state

    spec_args = (kw["task"], kw["model_dir"], kw["clients"], kw["dirichlet"], kw["iid"], kw["d_model"],
                 kw["n_layers"])
    cfg = fed_config(seed=seed, device=device, **kw)   # option errors before the run dir exists
    task = build_task(*spec_args, seed)
    fed = Federation(task, cfg)
    inputs = []
    if kw["task"] not in ("digits", "instruct"):
        inputs.append(kw["task"].removeprefix("jsonl:"))
    from paperkit.core.io import sha256_file

    run = runtime.start_run(run_dir, resume=resume, force=force,
                            extra={"data_sha256": sha256_file(inputs[0])} if inputs else None)
    fstate, rows, prev = fed.initial_state(), [], []
    if run.resumed and run.has_checkpoint("state.pt"):
        fstate, rows, prev = load_round(run, fed, cfg.algo)
    quiet = state.settings.get("quiet")
    with progress(total=cfg.rounds, initial=fstate.round, desc=f"ferret-train {cfg.algo}", unit="round") as bar:
        while fstate.round < cfg.rounds:
            fstate, row, prev = fed.run_round(fstate, prev)
            rows.append(row)
            save_round(run, fstate, rows, prev, cfg.algo)
            bar.update(1)
            if not quiet:
                click.echo(round_line(row), err=True)
    if not rows:
        raise PaperkitError("no rounds were run")
    summary = write_results(run, fed, fstate, rows)
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=inputs)
    options.echo_data(json.dumps({"run_dir": str(run.path), "algo": cfg.algo, "task": task.name,
                                  "params": fed.dim, "rounds": len(rows), **summary["final"],
                                  "uplink_floats_per_client_round": summary["totals"]["uplink_floats_per_client_round"],
                                  "uplink_bytes_total": summary["totals"]["uplink_bytes"],
                                  "wall_s": summary["seconds"]["wall_s"]}))
