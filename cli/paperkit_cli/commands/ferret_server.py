"""``paperkit ferret-server``: a Flower SuperLink running the ferret ServerApp (clients: ferret-client)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._ferret_common import (
    DEFAULT_PORT,
    HostPort,
    algo_options,
    insecure_option,
    task_options,
    tls_ca_option,
)

SETTINGS = "paperkit.methods.ferret.run:FerretServerSettings"


@options.command("ferret-server",
                 short_help="Serve Ferret (or a baseline) rounds on Flower: SuperLink + ServerApp, TLS by default.")
@click.option("--listen", type=HostPort(), default=f"127.0.0.1:{DEFAULT_PORT}", show_default=True,
              help="Where the SuperLink listens (its Fleet, Control and Runtime APIs share this port). "
                   "Use 0.0.0.0:PORT or an interface address to admit other machines.")
@tls_ca_option
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False), default=None, metavar="PEM",
              help="The server's certificate (its SAN must name the host clients connect to).")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False), default=None, metavar="PEM",
              help="The server certificate's private key.")
@insecure_option
@click.option("--auth-keys", type=click.Path(exists=True, dir_okay=False), default=None, metavar="FILE",
              help="Turn on SuperNode authentication and admit only these public keys (one OpenSSH EC key per "
                   "line; ferret-certs --nodes N writes node_public_keys.csv). Needs TLS.")
@click.option("--min-clients", type=click.IntRange(min=1), default=2, show_default=True,
              help="Wait for this many clients before the first round (at most --clients).")
@click.option("--wait-timeout", type=options.FiniteFloat(min=0.0, min_open=True), default=120.0, show_default=True,
              help="Seconds to wait for --min-clients (then go on with those connected, if any).")
@click.option("--round-timeout", type=options.FiniteFloat(min=0.0, min_open=True), default=600.0, show_default=True,
              help="Seconds a round waits for its clients; late or lost ones count as failures.")
@algo_options
@task_options
@options.seed_option
@options.jobs_option
@options.device_option
@options.run_dir_options
def cli(listen, tls_ca, tls_cert, tls_key, insecure, auth_keys, run_dir, resume, force, **_):
    """Run the server side of federated Ferret (or FedAvg/FedZO/FedKSeed) on Flower's deployment engine.

    Starts `flower-superlink` on --listen, submits the ferret Flower App as a run (its ServerApp
    runs under the SuperLink) and follows it. Clients are `paperkit ferret-client` processes (one
    `flower-supernode` each, holding one partition); they get the task and algorithm settings from
    the run. Each round samples the clients `ferret-train` would sample with the same seed, sends each
    the compact messages (seeds and gamma for Ferret) of the rounds it has not replayed, and
    aggregates the replies: the global model never travels, and the run ends at the model the
    in-process simulation reaches, bit for bit. A client lost mid-round is a logged failure; the round
    completes with the others. Every round is checkpointed: --resume continues an interrupted run
    (clients rejoin and replay the history). TLS is on unless --insecure (then 127.0.0.1 only).

    Writes to DIR: history.csv (with failures and wire bytes), timing.csv, summary.json, curves.png,
    model.pt, flower/app (the Flower App: `flwr run DIR/flower/app` runs it on a SuperLink you
    manage), flower/superlink.log; one JSON line on stdout.

    \b
    Examples:
      $ paperkit ferret-certs --run-dir certs
      $ paperkit ferret-server --tls-ca certs/ca.crt --tls-cert certs/server.crt --tls-key certs/server.key \\
          --clients 2 --fraction 1 --rounds 5 --run-dir runs/fl
      $ paperkit ferret-client --tls-ca certs/ca.crt --partition-id 0     # and --partition-id 1
      $ paperkit ferret-server --insecure --clients 2 --fraction 1 --rounds 3 --run-dir runs/try
    """
    from paperkit.core.errors import UsageError
    from paperkit.methods.ferret.deploy import is_loopback
    from paperkit.methods.ferret.run import FerretServerSettings
    from paperkit_cli import runtime

    s = runtime.settings(FerretServerSettings)

    host, port = listen
    if insecure:
        if not is_loopback(host):
            raise UsageError(f"--insecure serves plain HTTP and binds 127.0.0.1 only, not '{host}'; give "
                             "--tls-ca/--tls-cert/--tls-key (paperkit ferret-certs writes a set) to admit other "
                             "machines")
        if auth_keys:
            raise UsageError("--auth-keys needs TLS (Flower refuses SuperNode authentication over plain HTTP); "
                             "drop --insecure")
        tls = None
    else:
        if not (tls_ca and tls_cert and tls_key):
            raise UsageError("TLS is on by default: give --tls-ca, --tls-cert and --tls-key (paperkit ferret-certs "
                             "--run-dir DIR writes a set), or --insecure for a trial on 127.0.0.1")
        import os

        tls = tuple(os.path.abspath(p) for p in (tls_ca, tls_cert, tls_key))
    if s.min_clients > s.clients:
        raise UsageError(f"--min-clients {s.min_clients} is more than --clients {s.clients}; at most "
                         f"{s.clients} clients can join")
    from paperkit_cli.commands._ferret_serve import serve

    serve(s, host=host, port=port, tls=tls, auth_keys=auth_keys, run_dir=run_dir, resume=resume, force=force)
