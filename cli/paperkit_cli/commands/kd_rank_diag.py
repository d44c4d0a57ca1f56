"""``paperkit kd-rank-diag``: where KL and the Kendall rank loss put their gradient, and how they react to scale."""

from __future__ import annotations

import click

from paperkit_cli import options


@options.command("kd-rank-diag", short_help="Gradient share per teacher-probability decile (KL vs rank loss); "
                                            "loss change under logit scaling.")
@click.option("--teacher-logits", "--logits-t", "teacher_logits", required=True, metavar="T.npy",
              help="Teacher logits, samples × classes (.npy/.npz).")
@click.option("--student-logits", "--logits-s", "student_logits", required=True, metavar="S.npy",
              help="Student logits of the same samples, same shape.")
@click.option("--temperature", "-T", type=click.FloatRange(min=0.0, min_open=True), default=4.0, show_default=True,
              help="Temperature of the KL (KD) loss.")
@click.option("--rank-k", type=click.FloatRange(min=0.0, min_open=True), default=1.0, show_default=True)
@click.option("--rank-form", type=click.Choice(["tanh", "sigmoid", "product"]), default="tanh", show_default=True)
@click.option("--rank-standardize/--no-rank-standardize", default=True, show_default=True)
@click.option("--bins", type=click.IntRange(min=1), default=10, show_default=True,
              help="Teacher-probability bins (10: deciles).")
@click.option("--scales", default="0.5,2", show_default=True, help="Factors applied to the student logits.")
@click.option("--plot", default=None, metavar="PNG", help="Bar chart of the gradient shares.")
@options.output_options
def cli(teacher_logits, student_logits, temperature, rank_k, rank_form, rank_standardize, bins, scales, plot, output,
        fmt, manifest_path):
    """Diagnose KL vs the Kendall rank loss on your logits.

    Reads teacher and student logits (same shape). Writes to --output one row per teacher-probability
    bin (diagnostic=grad_share: share of |∂L/∂z^s| for KL at T and for L_rank; bin 1 holds the
    least probable classes) and one row per scale (diagnostic=scale: each loss at student·scale and
    its relative change). The share of the lowest 50% and the scaling summary go to stderr.

    \b
    Examples:
      $ paperkit kd-rank-diag --teacher-logits kd/teacher_test.npy --student-logits kd/student_kd_norank_s0_test.npy
      $ paperkit kd-rank-diag --teacher-logits T.npy --student-logits S.npy --rank-k 5 --plot share.png -o diag.csv
    """
    from paperkit.core import io, plots, tables
    from paperkit.core.errors import UsageError
    from paperkit.methods.kd_rank import (
        check_logit_pair,
        gradient_share,
        gradient_share_figure,
        scale_sensitivity,
    )
    from paperkit_cli import runtime, state

    try:
        scale_list = [float(x) for x in scales.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--scales '{scales}' is invalid; expected comma-separated numbers") from None
    t = io.read_array(io.require_file(teacher_logits))
    s = io.read_array(io.require_file(student_logits))
    t, s = check_logit_pair(t, s, names=(teacher_logits, student_logits))
    if bins > t.shape[1]:
        raise UsageError(f"--bins {bins} is more than the {t.shape[1]} classes")
    kw = {"temperature": temperature, "k": rank_k, "form": rank_form, "standardize": rank_standardize}
    share = gradient_share(t, s, n_bins=bins, **kw)
    scaling = scale_sensitivity(t, s, scale_list, **kw)
    rows = share.rows() + scaling
    if io.detect_format(output, fmt, default="jsonl") == "jsonl":
        io.write_jsonl(output, rows)  # each row keeps only its own fields
    else:
        tables.write_table(output, rows, fmt)
    if plot:
        fig = gradient_share_figure(share, f"{t.shape[0]} samples, {t.shape[1]} classes; KL T={temperature:g}, "
                                           f"rank k={rank_k:g} ({rank_form})")
        plots.save_figure(fig, plot)
    runtime.write_manifest(inputs=[teacher_logits, student_logits], output=output, manifest_path=manifest_path,
                           outputs=[plot] if plot else [])
    if not state.settings.get("quiet"):
        lines = [f"share of |gradient| on the 50% least probable classes: KL {share.kl_low_half:.3f}, "
                 f"rank {share.rank_low_half:.3f}"]
        lines += [f"scale ×{r['scale']:g}: KL {r['kl_base']:.4g} → {r['kl']:.4g} ({100 * r['kl_rel_change']:.1f}%), "
                  f"rank {r['rank_base']:.4g} → {r['rank']:.4g} ({100 * r['rank_rel_change']:.2f}%)" for r in scaling]
        click.echo("\n".join(lines), err=True)
