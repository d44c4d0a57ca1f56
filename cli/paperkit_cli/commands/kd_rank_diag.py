"""``paperkit kd-rank-diag``: where KL and the Kendall rank loss put their gradient, and how they react to scale."""

from __future__ import annotations

import click

from paperkit_cli import options

SETTINGS = "paperkit.methods.kd_rank.run:KdRankDiagSettings"


@options.command("kd-rank-diag", writes=("plot",),
                 short_help="Gradient share per teacher-probability decile (KL vs rank loss); "
                                            "loss change under logit scaling.")
@click.option("--teacher-logits", "--logits-t", "teacher_logits", required=True, metavar="T.npy",
              help="Teacher logits, samples × classes (.npy/.npz/.csv/.tsv/.jsonl, or '-' for stdin).")
@click.option("--student-logits", "--logits-s", "student_logits", required=True, metavar="S.npy",
              help="Student logits of the same samples, same shape (same formats; '-' for stdin).")
@click.option("--temperature", type=options.FiniteFloat(1e-2, 1e4), default=4.0, show_default=True,
              help="Temperature T of the KL (KD) loss, in [0.01, 1e4].")
@click.option("--rank-k", type=options.FiniteFloat(0.0, 1e4, min_open=True), default=1.0, show_default=True,
              help="Steepness k of the pairwise surrogate tanh(kΔ).")
@click.option("--rank-form", type=click.Choice(["tanh", "sigmoid", "product"]), default="tanh", show_default=True,
              help="Surrogate of the pairwise sign: tanh(kΔ), 2σ(kΔ)−1 or the plain product of differences.")
@click.option("--rank-standardize/--no-rank-standardize", default=True, show_default=True,
              help="Z-score the logits per sample before the rank loss.")
@click.option("--bins", type=click.IntRange(min=1), default=10, show_default=True,
              help="Teacher-probability bins (10: deciles).")
@click.option("--scales", type=options.ListOf(options.FiniteFloat(0.0, 1e6, min_open=True)), default="0.5,2",
              show_default=True, help="Factors in (0, 1e6] applied to the student logits.")
@click.option("--plot", default=None, metavar="PNG", help="Bar chart of the gradient shares.")
@options.device_option
@options.output_options
def cli(teacher_logits, student_logits, plot, output, fmt, manifest_path, **_):
    """Diagnose KL vs the Kendall rank loss on your logits.

    Reads teacher and student logits (same shape; deterministic, so no seed). Writes to --output one row per
    teacher-probability bin (diagnostic=grad_share: share of |∂L/∂z^s| for KL at T and for L_rank; bin 1
    holds the least probable classes) and one row per scale (diagnostic=scale: each loss at student·scale
    and its relative change). The share of the lowest 50% and the scaling summary go to stderr.

    \b
    Examples:
      $ paperkit kd-rank-diag --teacher-logits kd/teacher_test.npy --student-logits kd/student_kd_norank_s0_test.npy
      $ paperkit kd-rank-diag --teacher-logits T.npy --student-logits S.npy --rank-k 5 --plot share.png -o diag.csv
    """
    from paperkit.core import io, plots, tables
    from paperkit.methods.kd_rank import gradient_share_figure
    from paperkit.methods.kd_rank.run import KdRankDiagSettings, execute_kd_rank_diag, prepare_kd_rank_diag
    from paperkit_cli import runtime

    s = runtime.settings(KdRankDiagSettings)
    inputs = prepare_kd_rank_diag(s, teacher_logits, student_logits)
    result = execute_kd_rank_diag(inputs)
    rows = result.rows()
    if io.detect_format(output, fmt, default="jsonl") == "jsonl":
        io.write_jsonl(output, rows)  # each row keeps only its own fields
    else:
        tables.write_table(output, rows, fmt)
    if plot:
        n, c = inputs.teacher.shape
        fig = gradient_share_figure(result.share, f"{n} samples, {c} classes; KL T={s.temperature:g}, "
                                                  f"rank k={s.rank_k:g} ({s.rank_form})")
        plots.save_figure(fig, plot)
    runtime.write_manifest(inputs=[teacher_logits, student_logits], output=output, manifest_path=manifest_path,
                           outputs=[plot] if plot else [])
    share = result.share
    options.report("\n".join(
        [f"share of |gradient| on the 50% least probable classes: KL {share.kl_low_half:.3f}, "
         f"rank {share.rank_low_half:.3f}"]
        + [f"scale ×{r['scale']:g}: KL {r['kl_base']:.4g} → {r['kl']:.4g} ({100 * r['kl_rel_change']:.1f}%), "
           f"rank {r['rank_base']:.4g} → {r['rank']:.4g} ({100 * r['rank_rel_change']:.2f}%)" for r in result.scaling]))
