"""``paperkit ldsmc-bench``: every LD-SMC method on one task, side by side, over several seeds."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands._ldsmc_common import problem_options, sampler_options

ALL = "ldsmc,ltds,ldps,psld,resample,bootstrap,lsq"


@options.command("ldsmc-bench", short_help="Run every LD-SMC method on one task: bench.csv + bench.png.")
@problem_options
@click.option("--methods", default=ALL, show_default=True, help="Comma-separated methods to compare.")
@click.option("--sweep", type=click.Choice(["particles", "s", "kappa1", "kappa2", "rho", "gibbs", "steps"]),
              default=None, help="Ablation: run LD-SMC once per value of this parameter instead of --methods.")
@click.option("--values", default=None, metavar="V1,V2,...", help="Values of the --sweep parameter.")
@click.option("--seeds", type=click.IntRange(min=1), default=1, show_default=True,
              help="Repetitions (seed, seed+1, ...): new measurement noise and sampler randomness each.")
@sampler_options
@options.seed_option
@options.run_dir_options
def cli(model_dir, task, tau, image_files, mask_file, n_images, box, box_top, box_left, random_box, missing, methods,
        sweep, values, seeds, particles, steps, s, kappa1, kappa2, rho, gibbs, loglik, aux_var, refine_iters, lsq_iters, zeta, gamma,
        threads, seed, run_dir, resume, force):
    """Compare LD-SMC with its baselines (LTDS, latent DPS, PSLD, ReSample, bootstrap SMC, pixel least
    squares) on the same images, masks, measurement noise and number of DDIM steps.

    Writes to DIR: runs.csv (one row per method and seed), bench.csv (per method: mean and std over seeds
    of PSNR, SSIM, masked MSE, accuracy, Fréchet digits distance, residual, seconds per image), bench.png
    (bars) and grid.png (one restoration per method). Each finished (method, seed) is checkpointed;
    --resume continues. Prints the table on stderr and one JSON line on stdout.

    \b
    Examples:
      $ paperkit ldsmc-bench --model model/ --task box --n-images 64 --seeds 3 --run-dir bench/
      $ paperkit ldsmc-bench --model model/ --task sr2 --methods ldsmc,ldps,resample --run-dir sr/
      $ paperkit ldsmc-bench --model model/ --sweep particles --values 1,2,4,8 --run-dir n/
    """
    import json
    from dataclasses import replace

    import numpy as np
    import torch

    from paperkit.core import plots, tables
    from paperkit.core.errors import InputError
    from paperkit.core.progress import progress
    from paperkit.methods.ldsmc.plots import bench_figure, comparison_grid
    from paperkit.methods.ldsmc.restore import METHODS, evaluate, restore
    from paperkit_cli import runtime
    from paperkit_cli.commands import _ldsmc_common as common

    params = common.restore_params(particles, steps, s, kappa1, kappa2, rho, gibbs, loglik, aux_var, refine_iters,
                                   lsq_iters, zeta, gamma)
    if sweep is not None:
        if not values:
            raise InputError("--sweep needs --values V1,V2,...")
        kind = float if sweep in ("kappa1", "kappa2", "rho") else int
        try:
            vals = [kind(v) for v in values.split(",") if v.strip()]
        except ValueError:
            raise InputError(f"--values {values!r}: expected comma-separated {kind.__name__}s") from None
        if sweep in ("particles", "gibbs", "steps") and min(vals) < 1:
            raise InputError(f"--values: {sweep} must be at least 1")
        entries = [(f"{sweep}={v}", "ldsmc", replace(params, **{sweep: v})) for v in vals]
    else:
        names = [m.strip() for m in methods.split(",") if m.strip()]
        bad = [m for m in names if m not in METHODS]
        if bad or not names:
            raise InputError(f"--methods: unknown {', '.join(bad) or '(none given)'}; expected some of "
                             f"{', '.join(METHODS)}")
        entries = [(m, m, params) for m in names]
    names = [e[0] for e in entries]
    if threads:
        torch.set_num_threads(threads)
    problems = [common.setup(model_dir, task, tau, image_files, mask_file, n_images, box, box_top, box_left,
                             random_box, missing, particles, seed + k) for k in range(seeds)]
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("threads",))
    rows, shown = [], {}
    with progress(total=len(names) * seeds, desc="ldsmc-bench", unit="run") as bar:
        for name, method, p in entries:
            for k, (prior, clf, truth, labels, op, y) in enumerate(problems):
                ck = f"{name}_{k}.json"
                if run.resumed and run.has_checkpoint(ck):
                    m = run.load_checkpoint(ck)
                else:
                    bar.set_postfix_str(name)
                    res = restore(method, prior, op, y, tau, p, seed=seed + k)
                    m = evaluate(res, truth, op, y, classifier=clf if labels is not None else None, labels=labels)
                    m["method"], m["seed"] = name, seed + k
                    run.save_checkpoint(ck, m)
                    if k == 0:
                        run.save_checkpoint(f"{name}_restored.npz", {"x": res.restored})
                if k == 0:
                    shown[name] = run.load_checkpoint(f"{name}_restored.npz")["x"]
                rows.append(m)
                bar.update(1)
    summary = []
    for name in names:
        mine = [r for r in rows if r["method"] == name]
        out = {"method": name}
        for key in mine[0]:
            if key not in ("method", "seed") and isinstance(mine[0][key], (int, float)):
                vals = np.array([r[key] for r in mine], dtype=float)
                out[key], out[key + "_std"] = float(vals.mean()), float(vals.std())
        summary.append(out)
    tables.write_table(run.file("runs.csv"), rows)
    tables.write_table(run.file("bench.csv"), summary)
    prior, clf, truth, labels, op, y = problems[0]
    title = f"{op.name}, τ = {tau}, N = {particles}, {steps} steps, {len(truth)} images × {seeds} seeds"
    plots.save_figure(bench_figure(summary, title=title), run.file("bench.png"))
    with torch.no_grad():
        meas = op.pinv(y).clamp(-1, 1).numpy()
    plots.save_figure(comparison_grid({"truth": truth, "measured": meas, **shown}, title=title), run.file("grid.png"))
    runtime.write_manifest(run_dir=run.path, seed=seed, inputs=[*image_files, *([mask_file] if mask_file else [])])
    common.print_table(summary)
    options.echo_data(json.dumps({"run_dir": str(run.path), "task": op.name, "methods": [
        {k: r[k] for k in ("method", "psnr", "accuracy", "fd", "residual", "seconds_per_image") if k in r}
        for r in summary]}))
