"""The body of ferret-server (not a command): start the SuperLink, submit the run, follow it, write results."""

from __future__ import annotations

import click

RESUME_FREE = ("listen", "tls_ca", "tls_cert", "tls_key", "insecure", "auth_keys", "min_clients", "wait_timeout",
               "round_timeout")


def _error(entry: dict):
    from paperkit.core.errors import InputError, PaperkitError, UsageError

    cls = {2: UsageError, 3: InputError}.get(int(entry.get("exit_code", 1)), PaperkitError)
    return cls(entry["error"])


def serve(s, *, host, port, tls, auth_keys, run_dir, resume, force) -> None:
    """``s``: the run's FerretServerSettings."""
    import json
    import os
    import shutil
    import tempfile
    import time

    from paperkit.core.errors import PaperkitError
    from paperkit.methods.ferret import deploy
    from paperkit.methods.ferret.certs import read_public_keys
    from paperkit.methods.ferret.flower import PROGRESS, load_server_checkpoint, run_settings
    from paperkit.methods.ferret.run import prepare_ferret_train, server_task
    from paperkit_cli import options, runtime, state
    from paperkit_cli.commands._ferret_common import round_line, write_results

    quiet = state.settings.get("quiet")

    def say(text: str) -> None:
        if not quiet:
            click.echo(text, err=True)

    prepared = prepare_ferret_train(s)  # task and option errors before anything starts
    fed, cfg, data_sha = prepared.fed, prepared.fed.cfg, prepared.data_sha256
    inputs = [os.path.abspath(p) for p in prepared.inputs]
    keys = read_public_keys(auth_keys) if auth_keys else None
    task = server_task(s)
    deploy.check_can_listen(host, port)  # a taken port: one error line, and no run dir left behind
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=RESUME_FREE,
                            extra={"data_sha256": data_sha} if data_sha else None)
    settings = run_settings(task=task, fed=cfg, run_dir=run.path, min_clients=s.min_clients,
                            wait_timeout=s.wait_timeout, round_timeout=s.round_timeout, data_sha256=data_sha)
    flower_dir = run.path / "flower"
    app = deploy.write_app(flower_dir / "app", settings)
    progress = flower_dir / PROGRESS
    progress.unlink(missing_ok=True)
    home = tempfile.mkdtemp(prefix="paperkit-flwr-")
    link = client = run_id = None
    rounds_seen = 0
    try:
        link = deploy.start_superlink(host, port, tls=tls, node_auth=keys is not None, flwr_home=home,
                                      log_path=flower_dir / "superlink.log")
        client = deploy.control_client(host, port, tls[0] if tls else None)
        if keys:
            deploy.register_nodes(client, keys)
        run_id = deploy.submit_run(client, app)
        say(f"ferret-server: Flower SuperLink on {host}:{port} ({'TLS' if tls else 'plain HTTP, loopback only'}"
            f"{', SuperNode authentication: ' + str(len(keys)) + ' keys' if keys else ''}); run {run_id}; "
            f"waiting for {s.min_clients} client(s) (paperkit ferret-client --server {host}:{port} ...)")
        pos, failed = 0, None
        while True:
            status, sub, details = deploy.run_status(client, run_id)
            if progress.exists():
                with open(progress, encoding="utf-8") as f:
                    f.seek(pos)
                    chunk = f.read()
                complete = chunk[:chunk.rfind("\n") + 1]
                pos += len(complete.encode())
                for line in complete.splitlines():
                    entry = json.loads(line)
                    if "row" in entry:
                        row = entry["row"]
                        rounds_seen += 1
                        say(round_line(row))
                    elif "joined" in entry:
                        say(f"ferret-server: clients holding partitions {entry['joined']} joined")
                    elif "resumed_at" in entry:
                        say(f"ferret-server: resuming after round {entry['resumed_at']}")
                    elif "note" in entry:
                        say(f"ferret-server: {entry['note']}")
                    elif "error" in entry:
                        failed = entry
            if status == "finished":
                break
            if not link.alive():
                raise PaperkitError(f"the Flower SuperLink stopped: {link.last_error()}")
            time.sleep(1.0)
        if failed is not None:
            raise _error(failed)
        if sub != "completed":
            raise PaperkitError(f"the Flower run ended '{sub}'{': ' + details if details else ''} "
                                f"(see {flower_dir / 'superlink.log'})")
    except KeyboardInterrupt:
        if client is not None and run_id is not None:
            deploy.stop_run(client, run_id)
        raise
    finally:
        if link is not None:
            link.stop()
        shutil.rmtree(home, ignore_errors=True)
    server = load_server_checkpoint(run.path, fed)
    if server is None or not server.rows:
        raise PaperkitError("no round finished (no clients connected?)")
    summary = write_results(run, fed, server.state, server.rows,
                            extra={"failures": sum(r["failures"] for r in server.rows)})
    runtime.write_manifest(run_dir=run.path, seed=s.seed, inputs=inputs,
                           extra={"flower": {"run_id": run_id, "superlink": f"{host}:{port}", "tls": tls is not None,
                                             "node_auth": keys is not None}})
    options.echo_data(json.dumps({"run_dir": str(run.path), "algo": cfg.algo, "rounds": len(server.rows),
                                  **summary["final"], "failures": summary["failures"]}))
