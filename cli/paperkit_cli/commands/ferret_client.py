"""``paperkit ferret-client``: one data holder of a real federated Ferret run on Flower."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands.ferret_train import task_options


@options.command("ferret-client", short_help="Join a ferret-server run as one Flower client (one data partition).")
@click.option("--server", "address", default="127.0.0.1:8080", show_default=True, metavar="HOST:PORT",
              help="The ferret-server to connect to.")
@click.option("--partition-id", type=click.IntRange(min=0), required=True,
              help="Which client shard of the task this process holds (0 .. clients-1).")
@click.option("--max-wait", type=click.FloatRange(min=0.0, min_open=True), default=120.0, show_default=True,
              help="Seconds to keep retrying to reach the server.")
@click.option("--drop-round", type=click.IntRange(min=1), default=None,
              help="Fault drill: exit abruptly while training this round (the server carries on without it).")
@task_options
@options.seed_option
@options.jobs_option
@options.device_option
def cli(address, partition_id, max_wait, drop_round, seed, jobs, device, **kw):
    """Train locally for a ferret-server and send back only the round's message.

    Builds the task with the same options as the server (checked by a fingerprint), keeps a replica
    of the global model by replaying the messages the server forwards (seeds and gamma for Ferret),
    runs the local steps on its partition and returns (seed, K_l, gamma). The algorithm's settings
    (K, learning rates, blocks, ...) come from the server. Exits when the server finishes.

    \b
    Examples:
      $ paperkit ferret-client --server 127.0.0.1:8080 --clients 2 --partition-id 0
      $ paperkit ferret-client --server 10.0.0.5:8080 --task instruct --clients 10 --partition-id 3
    """
    import logging

    from paperkit_cli.commands.ferret_train import set_threads

    set_threads(jobs)

    from paperkit.core.errors import ConfigError
    from paperkit.methods.ferret import Federation
    from paperkit.methods.ferret.flower import make_client, run_client
    from paperkit_cli.commands.ferret_train import build_task, task_spec

    spec_args = (kw["task"], kw["model_dir"], kw["clients"], kw["dirichlet"], kw["iid"], kw["d_model"],
                 kw["n_layers"])
    if partition_id >= kw["clients"]:
        raise ConfigError(f"--partition-id {partition_id} is out of range; expected 0..{kw['clients'] - 1}")
    task = build_task(*spec_args, seed)
    logging.getLogger("paperkit").setLevel(logging.INFO)

    def build(cfg):
        cfg.device = device
        return Federation(task, cfg)

    client = make_client(build, partition=partition_id, task_spec=task_spec(*spec_args, seed), seed=seed,
                         drop_round=drop_round)
    run_client(client, address=address, max_wait_time=max_wait)
