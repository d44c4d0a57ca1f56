"""``paperkit kd-rank``: distil students with and without the Kendall's τ ranking loss (Guan et al., ICML 2025)."""

from __future__ import annotations

import click

from paperkit_cli import options

_NONNEG = click.FloatRange(min=0.0)
_POS = click.FloatRange(min=0.0, min_open=True)


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
@click.option("--teacher-epochs", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--base", "bases", default="kd", show_default=True, metavar="LIST",
              help="Base losses, comma-separated: kd, dkd, lskd, mlkd (instance + batch levels), none.")
@click.option("--rank-weight", type=_NONNEG, default=1.0, show_default=True,
              help="γ of the rank-on students (rank-off students use 0); 0 trains only the bases.")
@click.option("--rank-k", type=_POS, default=1.0, show_default=True, help="Steepness k of tanh(kΔ).")
@click.option("--rank-form", type=click.Choice(["tanh", "sigmoid", "product"]), default="tanh", show_default=True)
@click.option("--rank-standardize/--no-rank-standardize", default=True, show_default=True,
              help="Z-score the logits per sample before the rank loss.")
@click.option("--temperature", "-T", type=_POS, default=4.0, show_default=True, help="Temperature of the base.")
@click.option("--ce-weight", type=_NONNEG, default=None, help="α on cross-entropy [default: the base's: kd/lskd 0.1, "
              "dkd/mlkd 1].")
@click.option("--base-weight", type=_NONNEG, default=None, help="β on the base loss [default: kd/lskd 0.9, dkd/mlkd 1].")
@click.option("--dkd-beta", type=_NONNEG, default=8.0, show_default=True, help="DKD's weight on non-target KL.")
@click.option("--dkd-warmup", type=click.IntRange(min=0), default=20, show_default=True,
              help="DKD warm-up epochs (capped at --epochs).")
@click.option("--student-hidden", default="32", show_default=True, help="Student MLP hidden sizes ('linear': none).")
@click.option("--epochs", type=click.IntRange(min=1), default=20, show_default=True, help="Student epochs.")
@click.option("--batch-size", type=click.IntRange(min=1), default=128, show_default=True)
@click.option("--lr", type=_POS, default=3e-3, show_default=True, help="Adam learning rate (cosine schedule).")
@click.option("--seeds", default="0,1,2", show_default=True, help="Student seeds (initial weights, batch order).")
@click.option("--teacher-seed", type=click.IntRange(min=0), default=0, show_default=True)
@options.run_dir_options
def cli(data, train_per_class, test_per_class, data_seed, teacher, teacher_hidden, teacher_epochs, bases, rank_weight,
        rank_k, rank_form, rank_standardize, temperature, ce_weight, base_weight, dkd_beta, dkd_warmup, student_hidden,
        epochs, batch_size, lr, seeds, teacher_seed, run_dir, resume, force):
    """Train a teacher (or load one) and students with and without the Kendall's τ ranking loss.

    For each base in --base and each seed, trains a student on α·CE + β·base (rank off) and on
    α·CE + β·base + γ·L_rank (rank on), evaluates it on the test split and writes to DIR:
    results.csv (seed, base, rank, top-1, top-5, mean Kendall τ(student, teacher), KL, T and every
    weight), timing.csv (train seconds), curves.csv (per-epoch loss terms, test top-1, test rank
    loss), summary.csv (mean ± std per base and rank on/off), teacher.pt and teacher.json,
    student_<base>_<rank|norank>_s<seed>.pt, test logits (teacher_test.npy,
    student_<...>_test.npy: inputs for kd-rank-diag), config.yaml, manifest.json. Prints the table on stderr
    and one JSON line on stdout. Every finished student is checkpointed; --resume continues.

    \b
    Examples:
      $ paperkit kd-rank --data synth100 --train-per-class 30 --epochs 5 --teacher-epochs 5 --seeds 0,1 --run-dir kd/
      $ paperkit kd-rank-diag --teacher-logits kd/teacher_test.npy --student-logits kd/student_kd_norank_s0_test.npy
      $ paperkit kd-rank --data digits --base kd,dkd --rank-weight 0.5 --epochs 10 --run-dir dig/
      $ paperkit kd-rank --data digits --teacher dig/teacher.pt --base lskd --epochs 10 --seeds 0 --run-dir dig2/
    """
    import json

    import torch

    from paperkit.core import io, tables
    from paperkit.core.errors import InputError, UsageError
    from paperkit.core.progress import progress
    from paperkit.methods import kd_rank as K
    from paperkit.methods.kd_rank.experiment import parse_bases, parse_seeds, plan, run_job, summarize
    from paperkit_cli import runtime

    base_list, seed_list = parse_bases(bases), parse_seeds(seeds)
    t_hidden, s_hidden = K.parse_hidden(teacher_hidden), K.parse_hidden(student_hidden)
    template = K.DistillConfig(base=base_list[0], temperature=temperature, rank_weight=rank_weight, rank_k=rank_k,
                               rank_form=rank_form, rank_standardize=rank_standardize, dkd_beta=dkd_beta,
                               dkd_warmup=min(dkd_warmup, epochs),
                               extra={"ce_weight": ce_weight, "base_weight": base_weight})
    settings = K.TrainSettings(epochs=epochs, batch_size=batch_size, lr=lr)
    dataset = K.load_data(data, train_per_class=train_per_class, test_per_class=test_per_class, data_seed=data_seed)
    if teacher == "logits" and dataset.teacher_train is None:
        raise UsageError("--teacher logits needs --data npy:DIR with teacher_train.npy and teacher_test.npy")
    loaded = None
    inputs = list(dataset.files)
    if teacher not in ("train", "logits"):
        loaded = K.load_teacher(io.load_torch(io.require_file(teacher)), dataset, teacher)
        inputs.append(teacher)
    extra = {"input_sha256": {f: io.sha256_file(f) for f in inputs}} if inputs else {}
    run = runtime.start_run(run_dir, resume=resume, force=force, extra=extra)
    torch.set_num_threads(1)  # small MLPs: one thread is fastest and leaves cores to parallel runs

    teacher_info = {"source": teacher}
    if teacher == "logits":
        t_train, t_test = dataset.teacher_train, dataset.teacher_test
    else:
        if loaded is None:
            if run.resumed and run.file("teacher.pt").exists():
                loaded = K.load_teacher(io.load_torch(run.file("teacher.pt")), dataset, str(run.file("teacher.pt")))
            else:
                with progress(total=teacher_epochs, desc="teacher", unit="epoch") as bar:
                    loaded = K.train_teacher(dataset, hidden=t_hidden, seed=teacher_seed,
                                             settings=K.TrainSettings(epochs=teacher_epochs, batch_size=batch_size,
                                                                      lr=lr),
                                             on_epoch=lambda _: bar.update())
                io.save_torch(run.file("teacher.pt"), loaded.checkpoint())
        t_train, t_test = K.predict_logits(loaded.model, dataset.X_train), K.predict_logits(loaded.model,
                                                                                             dataset.X_test)
        teacher_info["hidden"] = list(loaded.hidden)
    if t_train.shape[1] != dataset.n_classes:
        raise InputError(f"teacher gives {t_train.shape[1]} classes but the data has {dataset.n_classes}")
    teacher_info.update(K.evaluate(t_test, None, dataset.y_test))
    io.write_json(run.file("teacher.json"), teacher_info)
    io.write_array(run.file("teacher_test.npy"), t_test)

    jobs = plan(base_list, seed_list, rank_weight)
    rows, curves, timing = [], [], []
    with progress(total=len(jobs) * epochs, desc="students", unit="epoch") as bar:
        for job in jobs:
            ck = f"{job.name}.json"
            if run.resumed and run.has_checkpoint(ck):
                done = run.load_checkpoint(ck)
                bar.update(epochs)
            else:
                bar.set_postfix_str(job.name)
                res = run_job(job, dataset, t_train, t_test, template, hidden=s_hidden, settings=settings,
                              on_epoch=lambda _: bar.update())
                io.save_torch(run.file(f"student_{job.name}.pt"),
                              {"kind": "paperkit.kd_rank.student", "hidden": list(s_hidden),
                               "n_features": dataset.n_features, "n_classes": dataset.n_classes,
                               "state_dict": res.state_dict})
                io.write_array(run.file(f"student_{job.name}_test.npy"), res.test_logits)
                done = {"row": res.row, "curves": res.curves, "seconds": res.train_seconds}
                run.save_checkpoint(ck, done)
            rows.append(done["row"])
            curves.extend(done["curves"])
            timing.append({"seed": job.seed, "base": job.base, "rank": done["row"]["rank"],
                           "train_seconds": done["seconds"]})
    summary = summarize(rows)
    tables.write_table(run.file("results.csv"), rows)
    tables.write_table(run.file("curves.csv"), curves)
    tables.write_table(run.file("timing.csv"), timing)
    tables.write_table(run.file("summary.csv"), summary)
    runtime.write_manifest(run_dir=run.path, seed=seed_list[0], inputs=inputs)
    _print_table(summary, teacher_info, timing)
    options.echo_data(json.dumps({"run_dir": str(run.path), "data": dataset.name, "teacher_top1": teacher_info["top1"],
                                  "summary": [{k: r[k] for k in ("base", "rank", "n_seeds", "top1_mean", "top1_std",
                                                                  "kendall_tau_mean", "kendall_tau_std")}
                                              for r in summary]}))


def _print_table(summary: list[dict], teacher: dict, timing: list[dict]) -> None:
    from paperkit_cli import state

    if state.settings.get("quiet"):
        return
    secs: dict[tuple, list[float]] = {}
    for t in timing:
        secs.setdefault((t["base"], t["rank"]), []).append(t["train_seconds"])
    lines = [f"teacher top-1 {teacher['top1']:.2f}%",
             f"{'base':<5} {'rank':<4} {'T':>4} {'α':>5} {'β':>5} {'γ':>5} {'k':>5} {'top-1':>15} {'top-5':>15} "
             f"{'Kendall τ':>17} {'KL':>8} {'s/run':>7}"]
    for r in summary:
        s = sum(secs[(r["base"], r["rank"])]) / len(secs[(r["base"], r["rank"])])
        lines.append(f"{r['base']:<5} {r['rank']:<4} {r['temperature']:>4g} {r['ce_weight']:>5g} {r['base_weight']:>5g} "
                     f"{r['rank_weight']:>5g} {r['rank_k']:>5g} {r['top1_mean']:>7.2f} ± {r['top1_std']:<5.2f} "
                     f"{r['top5_mean']:>7.2f} ± {r['top5_std']:<5.2f} {r['kendall_tau_mean']:>7.4f} ± "
                     f"{r['kendall_tau_std']:<7.4f} {r['kl_mean']:>8.4f} {s:>7.1f}")
    click.echo("\n".join(lines), err=True)
