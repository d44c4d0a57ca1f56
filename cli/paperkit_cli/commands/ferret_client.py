"""``paperkit ferret-client``: one data holder of a real federated Ferret run (a Flower SuperNode)."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._ferret_common import (
    DEFAULT_PORT,
    HostPort,
    insecure_option,
    max_wait_option,
    tls_ca_option,
)


@options.command("ferret-client", short_help="Join a ferret-server run as one Flower SuperNode (one data partition).")
@click.option("--server", type=HostPort(), default=f"127.0.0.1:{DEFAULT_PORT}", show_default=True,
              help="The ferret-server (Flower SuperLink) to join.")
@click.option("--partition-id", type=click.IntRange(min=0), required=True,
              help="Which client shard of the task this node holds (0 .. clients-1 of the server's run).")
@tls_ca_option
@insecure_option
@click.option("--auth-key", type=click.Path(exists=True, dir_okay=False), default=None, metavar="FILE",
              help="This node's private key (OpenSSH EC, e.g. node-0.key from ferret-certs --nodes) for a server "
                   "that authenticates SuperNodes.")
@click.option("--data", type=click.Path(exists=True, dir_okay=False), default=None, metavar="FILE",
              help="This machine's copy of the run's JSONL data (checked against the server's sha256).")
@click.option("--model", "model_dir", type=click.Path(exists=True, file_okay=False), default=None, metavar="DIR",
              help="This machine's copy of the run's Hugging Face model folder.")
@max_wait_option(120.0)
@click.option("--drop-round", type=click.IntRange(min=1), default=None,
              help="Fault drill: crash while training this round (the server carries on without this node).")
@options.jobs_option
@options.device_option
def cli(server, partition_id, tls_ca, insecure, auth_key, data, model_dir, max_wait, drop_round, jobs, device):
    """Hold one partition of a ferret-server run: a Flower SuperNode whose ClientApp trains locally.

    Starts `flower-supernode` against the server. The task and the algorithm's settings come from
    the server's run; each round this node replays the messages it has not seen (seeds and gamma
    for Ferret) on its replica of the global model, runs the local steps on its partition and sends
    back only its own message. The server's certificate is checked against --tls-ca before Flower
    starts. Exits 0 when the server's run is over, 1 when the server cannot be reached, is not
    trusted, refuses this node, or is lost for longer than --max-wait.

    \b
    Examples:
      $ paperkit ferret-client --server 127.0.0.1:9092 --tls-ca certs/ca.crt --partition-id 0
      $ paperkit ferret-client --server 10.0.0.5:9092 --tls-ca ca.crt --auth-key node-3.key --partition-id 3
      $ paperkit ferret-client --insecure --partition-id 1      # with ferret-server --insecure
    """
    import contextlib
    import shutil
    import tempfile
    import time
    from pathlib import Path

    from paperkit.core.errors import PaperkitError, UsageError
    from paperkit.methods.ferret import deploy
    from paperkit_cli import state

    host, port = server
    if insecure and not deploy.is_loopback(host):
        raise UsageError(f"--insecure is for a server on 127.0.0.1 only, not '{host}'; give --tls-ca")
    if not insecure and not tls_ca:
        raise UsageError("TLS is on by default: give --tls-ca (the CA of the server's certificate), or --insecure "
                         "for a server started with --insecure on 127.0.0.1")
    tls_ca = str(Path(tls_ca).resolve()) if tls_ca else None
    auth_key = str(Path(auth_key).resolve()) if auth_key else None
    deploy.resolve(host)
    deploy.wait_reachable(host, port, max_wait)
    if not insecure:
        deploy.check_tls(host, port, tls_ca)
    from paperkit.core.resources import resolve_jobs

    node_config = {"partition-id": partition_id, "threads": resolve_jobs(jobs)}
    if data:
        node_config["data"] = str(Path(data).resolve())
    if model_dir:
        node_config["model"] = str(Path(model_dir).resolve())
    if device != "auto":
        node_config["device"] = device
    if drop_round:
        node_config["drop-round"] = drop_round
    control = Path(tempfile.mkdtemp(prefix="paperkit-ferret-node-"))
    node_config["control-dir"] = str(control)
    quiet = state.settings.get("quiet")
    node = None
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, control, ignore_errors=True)
        stack.callback(lambda: node is not None and node.stop())
        node = deploy.start_supernode(host, port, ca=None if insecure else tls_ca, private_key=auth_key,
                                      node_config=node_config, max_wait=max_wait, flwr_home=control / "home",
                                      log_path=control / "supernode.log")
        if not quiet:
            click.echo(f"ferret-client: SuperNode for partition {partition_id} started against {host}:{port}", err=True)
        last_seen = time.monotonic()
        next_probe = 0.0
        while True:
            now = time.monotonic()
            if now >= next_probe:  # Flower's SuperNode retries without end once joined: bound the wait here
                next_probe = now + 2.0
                if deploy.reachable(host, port):
                    last_seen = now
                elif now - last_seen > max_wait:
                    raise PaperkitError(f"lost the server at {host}:{port}: unreachable for {max_wait:.0f} s "
                                        "(--max-wait)")
            if (control / "done").exists():
                if not quiet:
                    click.echo("ferret-client: the server's run is over", err=True)
                return
            if (control / "error").exists():
                import json

                from paperkit.core.errors import InputError

                entry = json.loads((control / "error").read_text())
                cls = {2: UsageError, 3: InputError}.get(int(entry.get("exit_code", 1)), PaperkitError)
                raise cls(f"the server's run refused this node: {entry['error']}")
            if (control / "drop").exists():
                node.stop(kill=True)
                raise PaperkitError(f"dropped out in round {(control / 'drop').read_text().strip()} as asked "
                                    "(--drop-round)")
            if not node.alive():
                tail = " ".join(node.log_tail(200))
                refused = ("Failed to activate SuperNode", "must be registered", "not registered", "PERMISSION_DENIED",
                           "UNAUTHENTICATED", "Unauthenticated")
                if any(word in tail for word in refused):
                    raise PaperkitError(f"the server at {host}:{port} refused this node (SuperNode authentication: "
                                        "is its public key among the server's --auth-keys?)")
                raise PaperkitError(f"lost the server at {host}:{port} ({node.last_error()})")
            time.sleep(0.3)
