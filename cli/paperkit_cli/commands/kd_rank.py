"""``paperkit kd-rank``: distil students with and without the Kendall's τ ranking loss (Guan et al., ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.kd_rank.run:KdRankSettings"
BASES = ("kd", "dkd", "lskd", "mlkd", "none")
_WEIGHT = options.FiniteFloat(0.0, 1e6)


@options.command("kd-rank", short_help="Distil students with/without the Kendall τ ranking loss; mean ± std table.")
@click.option("--data", default="synth100", show_default=True, metavar="synth100|digits|npy:DIR",
              help="synth100 (100 classes in 20 super-classes), sklearn digits, or a folder with X_train.npy, "
                   "y_train.npy, X_test.npy, y_test.npy [teacher_train.npy, teacher_test.npy].")
@click.option("--train-per-class", type=click.IntRange(min=1), default=200, show_default=True,
              help="synth100: training samples per class.")
@click.option("--test-per-class", type=click.IntRange(min=1), default=100, show_default=True,
              help="synth100: test samples per class.")
@click.option("--data-seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the synth100 mixture and of the digits split (fixed across --seeds).")
@click.option("--teacher", default="train", show_default=True, metavar="train|logits|PATH",
              help="Train the teacher (saved as teacher.pt), use the npy folder's teacher logits, or load a "
                   "teacher.pt from an earlier run.")
@click.option("--teacher-hidden", default="512,512", show_default=True, help="Teacher MLP hidden sizes.")
@click.option("--teacher-epochs", type=click.IntRange(min=1), default=20, show_default=True,
              help="Epochs of the teacher's cross-entropy training (--teacher train).")
@click.option("--teacher-seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the teacher's initial weights and batch order (--teacher train).")
@click.option("--base", "bases", type=options.ListOf(choices=BASES, unique=True), default="kd", show_default=True,
              help="Base losses: kd, dkd, lskd, mlkd (instance, batch and class levels), none.")
@click.option("--rank-weight", type=_WEIGHT, default=1.0, show_default=True,
              help="γ of the rank-on students (rank-off students use 0); 0 trains only the bases.")
@click.option("--rank-k", type=options.FiniteFloat(0.0, 1e4, min_open=True), default=1.0, show_default=True,
              help="Steepness k of the pairwise surrogate tanh(kΔ).")
@click.option("--rank-form", type=click.Choice(["tanh", "sigmoid", "product"]), default="tanh", show_default=True,
              help="Surrogate of the pairwise sign: tanh(kΔ), 2σ(kΔ)−1 or the plain product of differences.")
@click.option("--rank-standardize/--no-rank-standardize", default=True, show_default=True,
              help="Z-score the logits per sample before the rank loss.")
@click.option("--temperature", type=options.FiniteFloat(0.0, 1e4, min_open=True), default=4.0, show_default=True,
              help="Temperature T of the base loss, in (0, 1e4].")
@click.option("--ce-weight", type=_WEIGHT, default=None,
              help="α on cross-entropy [default: the base's: kd/lskd 0.1, dkd/mlkd 1].")
@click.option("--base-weight", type=_WEIGHT, default=None, help="β on the base loss [default: kd/lskd 0.9, dkd/mlkd 1].")
@click.option("--dkd-beta", type=_WEIGHT, default=8.0, show_default=True, help="DKD's weight on non-target KL.")
@click.option("--dkd-warmup", type=click.IntRange(min=0), default=20, show_default=True,
              help="DKD warm-up epochs (capped at --epochs).")
@click.option("--student-hidden", default="32", show_default=True, help="Student MLP hidden sizes ('linear': none).")
@click.option("--epochs", type=click.IntRange(min=1), default=20, show_default=True, help="Student epochs.")
@click.option("--batch-size", type=click.IntRange(min=1), default=128, show_default=True,
              help="Mini-batch size of teacher and student training.")
@click.option("--lr", type=options.FiniteFloat(0.0, 10.0, min_open=True), default=3e-3, show_default=True,
              help="Adam learning rate (cosine schedule), in (0, 10]; a diverging run stops with an error.")
@options.seeds_option(help="Student seeds (initial weights, batch order); one student per seed, base and rank on/off.")
@click.option("--max-memory-gb", type=options.FiniteFloat(0.0, min_open=True), default=None,
              help="Refuse synth100 sizes needing more memory than this [default: 3/4 of RAM].")
@options.device_option
@click.option("--jobs", "-j", type=options.JOBS, default=0, show_default=True,
              help="torch threads; 0 means one per CPU core (under make -jN, the cores divided by N). Small "
                   "MLPs train fastest with -j 1. Results do not depend on it.")
@options.run_dir_options
def cli(run_dir, resume, force, **_):
    """Train a teacher (or load one) and students with and without the Kendall's τ ranking loss.

    For each base in --base and each seed, trains a student on α·CE + β·base (rank off) and on
    α·CE + β·base + γ·L_rank (rank on), evaluates it on the test split and writes to DIR:
    results.csv (seed, base, rank, top-1, top-5, mean Kendall τ(student, teacher), KL, T and every
    weight), timing.csv (train seconds), curves.csv (per-epoch loss terms, test top-1, test rank
    loss), summary.csv (mean ± std per base and rank on/off), teacher.pt and teacher.json,
    student_<base>_<rank|norank>_s<seed>.pt, test logits (teacher_test.npy,
    student_<...>_test.npy: inputs for kd-rank-diag), config.yaml, manifest.json. Prints the table on stderr
    and one JSON line on stdout. Every finished student is a checkpointed stage; --resume continues.

    \b
    Examples:
      $ paperkit kd-rank --data synth100 --train-per-class 30 --epochs 5 --teacher-epochs 5 --seeds 0,1 --run-dir kd/
      $ paperkit kd-rank-diag --teacher-logits kd/teacher_test.npy --student-logits kd/student_kd_norank_s0_test.npy
      $ paperkit kd-rank --data digits --base kd,dkd --rank-weight 0.5 --epochs 10 -j 1 --run-dir dig/
      $ paperkit kd-rank --data digits --teacher dig/teacher.pt --base lskd --epochs 10 --seeds 0 --run-dir dig2/
    """
    import json

    from paperkit.core import io, tables
    from paperkit.methods.kd_rank.run import KdRankSettings, execute_kd_rank, prepare_kd_rank
    from paperkit_cli import runtime

    s = runtime.settings(KdRankSettings)
    inputs = prepare_kd_rank(s)
    run = runtime.start_run(run_dir, resume=resume, force=force, resume_free=("max_memory_gb",),
                            extra={"input_sha256": {f: io.sha256_file(f) for f in inputs.files}} if inputs.files else {})
    result = execute_kd_rank(inputs, run)
    io.write_json(run.file("teacher.json"), result.teacher)
    io.write_array(run.file("teacher_test.npy"), result.teacher_test)
    for name, rows in (("results", result.rows), ("curves", result.curves), ("timing", result.timing),
                       ("summary", result.summary)):
        tables.write_table(run.file(f"{name}.csv"), rows)
    secs: dict[tuple, list[float]] = {}
    for t in result.timing:
        secs.setdefault((t["base"], t["rank"]), []).append(t["train_seconds"])
    rows = [{**r, "top1": f"{r['top1_mean']:.2f} ± {r['top1_std']:.2f}", "top5": f"{r['top5_mean']:.2f} ± {r['top5_std']:.2f}",
             "tau": f"{r['kendall_tau_mean']:.4f} ± {r['kendall_tau_std']:.4f}",
             "secs": sum(secs[(r["base"], r["rank"])]) / len(secs[(r["base"], r["rank"])])} for r in result.summary]
    options.report_table(rows, [("base", "base", ""), ("rank", "rank", ""), ("temperature", "T", "g"),
                                ("ce_weight", "α", "g"), ("base_weight", "β", "g"), ("rank_weight", "γ", "g"),
                                ("rank_k", "k", "g"), ("top1", "top-1", ""), ("top5", "top-5", ""),
                                ("tau", "Kendall τ", ""), ("kl_mean", "KL", ".4f"), ("secs", "s/run", ".1f")],
                         title=f"teacher top-1 {result.teacher['top1']:.2f}%")
    runtime.write_manifest(run_dir=run.path, seed=s.seeds[0], inputs=inputs.files)
    options.echo_data(json.dumps({"run_dir": str(run.path), "data": inputs.dataset.name,
                                  "teacher_top1": result.teacher["top1"],
                                  "summary": [{k: r[k] for k in ("base", "rank", "n_seeds", "top1_mean", "top1_std",
                                                                  "kendall_tau_mean", "kendall_tau_std")}
                                              for r in result.summary]}))
