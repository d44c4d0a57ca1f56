"""``paperkit ferret-certs``: a CA, a server certificate and SuperNode keys for a first real federated run."""

from __future__ import annotations

import click

from paperkit_cli import options


@options.command("ferret-certs", short_help="Write a self-signed CA, server certificate and node keys for ferret-server.")
@click.option("--host", "hosts", multiple=True, metavar="NAME",
              help="A host name or IP address clients use to reach the server (repeatable); 127.0.0.1 and "
                   "localhost are always in the certificate.")
@click.option("--nodes", type=click.IntRange(min=0, max=10_000), default=0, show_default=True,
              help="Also write this many SuperNode key pairs (node-I.key/.pub) and node_public_keys.csv.")
@click.option("--days", type=click.IntRange(min=1, max=3650), default=365, show_default=True,
              help="Validity of the certificates in days.")
@click.option("--run-dir", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="Folder for ca.crt, ca.key, server.crt, server.key, node keys and manifest.json.")
@click.option("--force", is_flag=True, help="Overwrite the certificates of a previous run in --run-dir.")
def cli(hosts, nodes, days, run_dir, force):
    """Write the TLS files (and optionally SuperNode keys) for ferret-server/ferret-client.

    A self-signed CA (ca.crt, ca.key), a server certificate signed by it for 127.0.0.1, localhost
    and every --host (server.crt, server.key), and with --nodes N the key pairs node-0.key ...
    (EC P-384, OpenSSH format) with node_public_keys.csv for ferret-server --auth-keys. Meant for
    a first try; private keys are written mode 0600 and never leave DIR. Give each client ca.crt
    (and its own node-I.key). Prints one JSON line with the paths on stdout.

    \b
    Examples:
      $ paperkit ferret-certs --run-dir certs
      $ paperkit ferret-certs --host 10.0.0.5 --host fl.example.org --nodes 3 --run-dir certs
    """
    import json

    from paperkit.methods.ferret.certs import write_certificates
    from paperkit_cli import runtime

    run = runtime.start_run(run_dir, force=force)
    written = write_certificates(run.path, hosts=list(hosts), nodes=nodes, days=days)
    runtime.write_manifest(run_dir=run.path)
    options.echo_data(json.dumps({"run_dir": str(run.path), **written}))
