"""``paperkit ferret-server``: the Flower server of a real federated Ferret run (clients: ferret-client)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands.ferret_train import algo_options, task_options


@options.command("ferret-server", short_help="Serve Ferret (or a baseline) rounds to Flower clients over gRPC.")
@click.option("--address", default="0.0.0.0:8080", show_default=True, metavar="HOST:PORT",
              help="Where the server listens.")
@click.option("--min-clients", type=click.IntRange(min=1), default=2, show_default=True,
              help="Wait for this many clients before the first round.")
@click.option("--wait-timeout", type=click.FloatRange(min=0.0, min_open=True), default=120.0, show_default=True,
              help="Seconds to wait for --min-clients (then go on with those connected).")
@click.option("--round-timeout", type=click.FloatRange(min=0.0, min_open=True), default=600.0, show_default=True,
              help="Seconds a round waits for its clients; late or lost ones count as failures.")
@algo_options
@task_options
@options.seed_option
@options.jobs_option
@options.device_option
@options.run_dir_options
def cli(address, min_clients, wait_timeout, round_timeout, run_dir, resume, force, seed, jobs, device, **kw):
    """Run the server side of federated Ferret (or FedAvg/FedZO/FedKSeed) on Flower.

    Clients are `paperkit ferret-client` processes started with the same task options, each holding
    one partition (--partition-id). Each round the server samples the same clients as `ferret-train`
    would with the same seed, sends each the compact messages (seeds and gamma for Ferret) of the rounds
    it has not replayed yet, and aggregates the messages it gets back: the global model itself never
    travels, and the run ends at the model the in-process simulation reaches. A client lost mid-round
    is logged and the round completes with the others. Writes to DIR: history.csv (with failures and
    measured wire bytes), timing.csv, summary.json, curves.png, model.pt; one JSON line on stdout.

    \b
    Examples:
      $ paperkit ferret-server --address 0.0.0.0:8080 --clients 2 --fraction 1 --rounds 5 --run-dir runs/fl
      $ paperkit ferret-client --server 127.0.0.1:8080 --clients 2 --partition-id 0   # on each data holder
    """
    import json

    from paperkit_cli.commands.ferret_train import set_threads

    set_threads(jobs)

    from paperkit.core.errors import PaperkitError
    from paperkit.methods.ferret import Federation
    from paperkit.methods.ferret.flower import run_server
    from paperkit_cli import runtime
    from paperkit_cli.commands.ferret_train import (
        build_task,
        fed_config,
        round_line,
        task_spec,
        write_results,
    )

    spec_args = (kw["task"], kw["model_dir"], kw["clients"], kw["dirichlet"], kw["iid"], kw["d_model"],
                 kw["n_layers"])
    cfg = fed_config(seed=seed, device=device, **kw)
    if resume:
        raise PaperkitError("ferret-server cannot --resume: the clients' replicas restart from the seed; "
                            "start a new run (ferret-train checkpoints and resumes in-process runs)")
    fed = Federation(build_task(*spec_args, seed), cfg)
    run = runtime.start_run(run_dir, resume=False, force=force,
                            resume_free=("address", "min_clients", "wait_timeout", "round_timeout"))

    def on_round(state, row):
        click.echo(round_line(row) + (f"  ({row['failures']} failed)" if row["failures"] else ""), err=True)
        run.save_checkpoint("state.pt", {"state": state.to_checkpoint(), "rows": json.dumps([row])})

    strategy = run_server(fed, address=address, task_spec=task_spec(*spec_args, seed), min_clients=min_clients,
                          wait_timeout=wait_timeout, round_timeout=round_timeout, on_round=on_round)
    if not strategy.rows:
        raise PaperkitError("no round finished (no clients connected?)")
    summary = write_results(run, fed, strategy.state, strategy.rows,
                            extra={"failures": sum(r["failures"] for r in strategy.rows)})
    runtime.write_manifest(run_dir=run.path, seed=seed)
    options.echo_data(json.dumps({"run_dir": str(run.path), "algo": cfg.algo, "rounds": len(strategy.rows),
                                  **summary["final"], "failures": summary["failures"]}))
