"""The body of ferret-server (not a command): start the SuperLink, submit the run, follow it, write results."""

from __future__ import annotations

import click

RESUME_FREE = ("listen", "tls_ca", "tls_cert", "tls_key", "insecure", "auth_keys", "min_clients", "wait_timeout",
               "round_timeout")


def _error(entry: dict):
    from paperkit.core.errors import InputError, PaperkitError, UsageError

    cls = {2: UsageError, 3: InputError}.get(int(entry.get("exit_code", 1)), PaperkitError)
    return cls(entry["error"])


def serve(*, host, port, tls, auth_keys, min_clients, wait_timeout, round_timeout, run_dir, resume, force, seed,
          device, kw) -> None:
    import json
    import os
    import shutil
    import tempfile
    import time

    from paperkit.core.errors import PaperkitError
    from paperkit.core.io import sha256_file
    from paperkit.methods.ferret import Federation, deploy
    from paperkit.methods.ferret.certs import read_public_keys
    from paperkit.methods.ferret.flower import PROGRESS, load_server_checkpoint, run_settings
    from paperkit_cli import options, runtime, state
    from paperkit_cli.commands.ferret_train import build_task, fed_config, round_line, write_results

    quiet = state.settings.get("quiet")

    def say(text: str) -> None:
        if not quiet:
            click.echo(text, err=True)

    spec_args = (kw["task"], kw["model_dir"], kw["clients"], kw["dirichlet"], kw["iid"], kw["d_model"],
                 kw["n_layers"])
    cfg = fed_config(seed=seed, device=device, **kw)
    fed = Federation(build_task(*spec_args, seed), cfg)  # task and option errors before anything starts
    keys = read_public_keys(auth_keys) if auth_keys else None
    inputs, data_sha = [], None
    if kw["task"] not in ("digits", "instruct"):
        inputs.append(os.path.abspath(kw["task"].removeprefix("jsonl:")))
        data_sha = sha256_file(inputs[0])
    task = {"task": f"jsonl:{inputs[0]}" if inputs else kw["task"],
            "model_dir": os.path.abspath(kw["model_dir"]) if kw["model_dir"] else None, "clients": kw["clients"],
            "dirichlet": None if kw["iid"] else kw["dirichlet"], "d_model": kw["d_model"], "layers": kw["n_layers"]}
    deploy.check_can_listen(host, port)  # a taken port: one error line, and no run dir left behind
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=RESUME_FREE,
                            extra={"data_sha256": data_sha} if data_sha else None)
    settings = run_settings(task=task, fed=cfg, run_dir=run.path, min_clients=min_clients,
                            wait_timeout=wait_timeout, round_timeout=round_timeout, data_sha256=data_sha)
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
            f"waiting for {min_clients} client(s) (paperkit ferret-client --server {host}:{port} ...)")
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
                        say(round_line(row) + (f"  ({row['failures']} failed)" if row["failures"] else ""))
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
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=inputs,
                           extra={"flower": {"run_id": run_id, "superlink": f"{host}:{port}", "tls": tls is not None,
                                             "node_auth": keys is not None}})
    options.echo_data(json.dumps({"run_dir": str(run.path), "algo": cfg.algo, "rounds": len(server.rows),
                                  **summary["final"], "failures": summary["failures"]}))
