"""Options and helpers shared by the ferret commands (not a command): the task and algorithm options of
ferret-train and ferret-server, their run-dir outputs, and the network options of ferret-server/-client."""

from __future__ import annotations

import click

from paperkit_cli import options

DEFAULT_PORT = 9092
TRAIN_SETTINGS = "paperkit.methods.ferret.run:FerretTrainSettings"
SERVER_SETTINGS = "paperkit.methods.ferret.run:FerretServerSettings"

# What every party must agree on (defaults: FerretTrainSettings).
task_options = options._compose(
    click.option("--task", default="digits", show_default=True, metavar="TASK",
                 help="digits (sklearn digits, MLP), instruct (generated instruction families, small "
                      "transformer), or jsonl:PATH (records with instruction/input/output[/category])."),
    click.option("--model", default=None, type=click.Path(file_okay=False), metavar="DIR",
                 help="A Hugging Face causal LM saved in a local folder (instruct/JSONL tasks); no downloads."),
    click.option("--clients", type=click.IntRange(min=1), default=20, show_default=True,
                 help="Number of clients (data holders)."),
    click.option("--dirichlet", type=options.FiniteFloat(min=0.0, min_open=True), default=0.5, show_default=True,
                 help="Dirichlet alpha of the label/category skew (digits, JSONL with categories). The instruct "
                      "task splits by task family instead."),
    click.option("--iid", is_flag=True, default=False, help="Split the data IID instead of by Dirichlet skew."),
    click.option("--d-model", type=click.IntRange(min=8), default=64, show_default=True,
                 help="Width of the built-in transformer (instruct/JSONL without --model)."),
    click.option("--layers", type=click.IntRange(min=1), default=2, show_default=True,
                 help="Layers of the built-in transformer."),
)

# The federated algorithm (defaults: FerretTrainSettings; ranges are checked again by FedConfig.validate).
algo_options = options._compose(
    click.option("--algo", type=click.Choice(["ferret", "fedavg", "fedzo", "fedkseed"]), default="ferret",
                 show_default=True, help="Ferret, or a baseline: FedAvg, FedZO, FedKSeed."),
    click.option("--fraction", type=options.FiniteFloat(), default=0.25, show_default=True,
                 help="Share of clients sampled each round, in (0, 1]."),
    click.option("--rounds", type=click.IntRange(min=1), default=30, show_default=True, help="Communication rounds."),
    click.option("--local-steps", type=click.IntRange(min=1), default=10, show_default=True,
                 help="Local steps T per round (first-order for Ferret/FedAvg, zeroth-order for FedZO/FedKSeed)."),
    click.option("--lr", type=options.FiniteFloat(), default=0.5, show_default=True, help="Local learning rate eta."),
    click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True,
                 help="Examples per local step."),
    click.option("--optimizer", type=click.Choice(["sgd", "adam"]), default="sgd", show_default=True,
                 help="Local first-order optimizer (fresh each round)."),
    click.option("--server-lr", type=options.FiniteFloat(), default=1.0, show_default=True,
                 help="Server learning rate on the mean update (paper: 10 on NI, 3 on Dolly)."),
    click.option("--momentum", type=options.FiniteFloat(0.0, 1.0, max_open=True), default=0.0, show_default=True,
                 help="Server momentum on the mean update."),
    click.option("--k", type=int, default=100, show_default=True,
                 help="Ferret: total projection coordinates per client per round, split over blocks."),
    click.option("--blocks", default="auto", show_default=True, metavar="auto|tensor|L",
                 help="Ferret blocks: auto (runs of tensors, as the official code), tensor, or L equal blocks."),
    click.option("--alloc", type=click.Choice(["norm", "uniform", "dim", "prop2"]), default="norm", show_default=True,
                 help="How K is split over blocks: by update norm, equally, by block size, or prop2 "
                      "(Prop. 2's optimum K_l ∝ ||Delta_l||/rho_l); sum K_l = K, at least 1 per block."),
    click.option("--seed-pool", type=click.Choice(["run", "per-block"]), default="run", show_default=True,
                 help="Ferret bases: run (one seed per client and round, K_l rows per block by --alloc) or "
                      "per-block (official code: a pool of K seeds fixed at start; block l uses a random subset "
                      "of max(2, floor(K·||Delta_l||/max||Delta||)) of them; --alloc is then unused)."),
    click.option("--clip", type=options.FiniteFloat(), default=None, metavar="NORM",
                 help="Clip each client's reconstructed update to this norm (official code: 10)."),
    click.option("--zo-eps", type=options.FiniteFloat(), default=1e-3, show_default=True,
                 help="Perturbation size of the zeroth-order baselines."),
    click.option("--kseed-pool", type=click.IntRange(min=1), default=4096, show_default=True,
                 help="FedKSeed: number of candidate seeds."),
)


def round_line(row: dict) -> str:
    return (f"round {row['round']:>3}  {row['algo']:<8} train {row['train_loss']:.4f}  test {row['test_loss']:.4f}  "
            f"acc {row['test_acc']:.4f}  up {row['uplink_floats']:.0f} floats/client  {row['wall_s']:.2f}s"
            + (f"  ({row['failures']} failed)" if row.get("failures") else ""))


def write_results(run, fed, state, rows, *, extra: dict | None = None) -> dict:
    """history.csv (deterministic), timing.csv (seconds), summary.json, curves.png, model.pt; returns the
    summary with the summed seconds added."""
    from paperkit.core import io, plots, tables
    from paperkit.methods.ferret import add_cumulative
    from paperkit.methods.ferret.checkpoint import TIMING_KEYS, split_timings
    from paperkit.methods.ferret.plots import curves_figure
    from paperkit.methods.ferret.run import summarize

    summary = summarize(fed, state, rows, extra)
    rows = add_cumulative(rows)
    # seconds vary from run to run; they live apart so the same seed gives the same history bytes
    data, timing = split_timings(rows)
    tables.write_table(run.file("history.csv"), data)
    tables.write_table(run.file("timing.csv"), timing)
    io.write_json(run.file("summary.json"), summary)
    io.save_torch(run.file("model.pt"), {"weights": state.weights.cpu(), "round": state.round})
    plots.save_figure(curves_figure(rows, title=f"{fed.cfg.algo} on {fed.task.name}"), run.file("curves.png"))
    return {**summary, "seconds": {k: sum(r.get(k, 0.0) for r in rows) for k in TIMING_KEYS}}


class HostPort(click.ParamType):
    """HOST:PORT, checked at parse time (a bad value is a one-line usage error, exit 2)."""

    name = "HOST:PORT"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        from paperkit.core.errors import UsageError
        from paperkit.methods.ferret.deploy import parse_hostport

        try:
            return parse_hostport(str(value), param.opts[0] if param else "address")
        except UsageError as e:
            self.fail(str(e), param, ctx)

    @staticmethod
    def to_text(value: tuple[str, int]) -> str:
        host, port = value
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def tls_ca_option(f):
    return click.option("--tls-ca", type=click.Path(exists=True, dir_okay=False), default=None, metavar="PEM",
                        help="CA certificate that signed the server's certificate (ferret-certs writes ca.crt).")(f)


insecure_option = click.option(
    "--insecure", is_flag=True,
    help="Plain HTTP instead of TLS, for a trial on one machine: allowed on 127.0.0.1 only.")


def max_wait_option(default: float):
    return click.option("--max-wait", type=options.FiniteFloat(min=0.0, min_open=True), default=default, show_default=True,
                        help="Seconds to keep trying to reach the server (and to wait for it when it is lost).")


