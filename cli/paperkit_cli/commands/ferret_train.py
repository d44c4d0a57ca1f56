"""``paperkit ferret-train``: simulate Ferret (Shu et al., ICML 2025) and its baselines in one process."""

from __future__ import annotations

from paperkit_cli import options
from paperkit_cli.commands._ferret_common import algo_options, task_options

SETTINGS = "paperkit.methods.ferret.run:FerretTrainSettings"


@options.command("ferret-train", short_help="Simulate Ferret federated tuning vs FedAvg/FedZO/FedKSeed.")
@algo_options
@task_options
@options.seed_option
@options.jobs_option
@options.device_option
@options.run_dir_options
def cli(run_dir, resume, force, **_):
    """Simulate federated full-parameter tuning with Ferret or a baseline, in one process.

    Each round samples --fraction of --clients; each runs --local-steps steps from the global model.
    Ferret projects its update on K shared-seed bases (block-wise, K_l by --alloc) and uploads only
    (seed, gamma); FedAvg and FedZO upload the full update; FedKSeed uploads (seed index, scalar)
    pairs. The server rebuilds, averages and steps with --server-lr. Writes to DIR: history.csv
    (per round: losses, accuracy, uplink/downlink floats and bytes), timing.csv (local, projection,
    reconstruction and wall seconds), summary.json, curves.png (loss/accuracy vs round and vs uplink
    bytes), model.pt, and a checkpoint every round (--resume continues an interrupted run). Prints
    one line per round on stderr and a JSON summary on stdout.

    \b
    Examples:
      $ paperkit ferret-train --algo ferret --k 200 --rounds 30 --run-dir runs/ferret
      $ paperkit ferret-train --algo fedavg --rounds 30 --run-dir runs/fedavg
      $ paperkit ferret-train --task instruct --clients 10 --fraction 0.3 --lr 0.003 --optimizer adam --rounds 5 --run-dir runs/instr
    """
    import json

    from paperkit.methods.ferret.run import FerretTrainSettings, execute_ferret_train, prepare_ferret_train
    from paperkit_cli import runtime
    from paperkit_cli.commands._ferret_common import round_line, write_results

    s = runtime.settings(FerretTrainSettings)
    inputs = prepare_ferret_train(s)   # option, data and model errors before the run dir exists
    run = runtime.start_run(run_dir, resume=resume, force=force,
                            extra={"data_sha256": inputs.data_sha256} if inputs.data_sha256 else None)
    result = execute_ferret_train(inputs, run, on_round=lambda row: options.report(round_line(row)))
    fed = inputs.fed
    summary = write_results(run, fed, result.state, result.rows)
    runtime.write_manifest(run_dir=run.path, seed=s.seed, inputs=inputs.inputs)
    options.echo_data(json.dumps({"run_dir": str(run.path), "algo": s.algo, "task": fed.task.name,
                                  "params": fed.dim, "rounds": len(result.rows), **summary["final"],
                                  "uplink_floats_per_client_round": summary["totals"]["uplink_floats_per_client_round"],
                                  "uplink_bytes_total": summary["totals"]["uplink_bytes"],
                                  "wall_s": summary["seconds"]["wall_s"]}))
