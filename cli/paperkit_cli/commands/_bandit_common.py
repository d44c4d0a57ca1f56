"""Options shared by bandit-sim, bandit-sweep and bandit-bound (one spelling, one help text)."""

from __future__ import annotations

import click

from paperkit_cli import options

# The algorithms of paperkit.methods.bandit.kernels.ALGORITHMS, spelled here so --help imports no numba
# (tests/cli/test_bandit.py checks the two lists agree).
ALGORITHMS = ("decofusion", "elimfusion", "elim-nofusion", "med-nofusion", "ucb", "klucb", "rucb")
PAPER_ALGORITHMS = "decofusion,elimfusion,elim-nofusion,med-nofusion"
MAX_HORIZON = 10**9  # paperkit.methods.bandit.run.MAX_HORIZON

instance_options = options._compose(
    click.option("--preset", default=None, metavar="NAME",
                 help="Built-in instance: official16 (default), reward-gap:G (G in (0, 0.9]), pref-gap:G "
                      "(G in (0, 0.5]), bradley-terry:S (S in (0, 1000])."),
    click.option("--instance", "instance_path", default=None, metavar="FILE",
                 help="Instance YAML ('-' for stdin): 'means' plus 'preference' (matrix, CSV path or "
                      "bradley-terry) or 'wins', and optional arm 'names'; the schema is above."),
)

# The instance YAML --help shows; tests/cli/test_bandit.py loads it through the library's reader.
# It lives here, not in the library, so --help imports no numpy.
INSTANCE_SCHEMA = """\
name: my-models            # optional; default: the file name
names: [a, b, c]           # optional arm names, one per mean, used in tables and messages
means: [0.9, 0.6, 0.5]     # K Bernoulli reward means in [0, 1]
preference:                # K x K: preference[k][l] = P(arm k beats arm l); diagonal 0.5,
  - [0.5, 0.7, 0.8]        #   preference + its transpose = 1; or a CSV path (no header),
  - [0.3, 0.5, 0.6]        #   or bradley-terry (with optional scale: 4, utilities: [...])
  - [0.2, 0.4, 0.5]
# instead of preference: wins: K x K win counts (list or CSV path), prior: 0 (pseudo-counts)
"""

INSTANCE_HELP = ("Arms are numbered from 0, like every index in paperkit (the paper's arm 1 is arm 0); the "
                 "best arm must be a Condorcet winner with the largest mean. The --instance YAML:")


def instance_schema_help(f):
    """Append the instance YAML schema to a command's help (apply it just below ``options.command``)."""
    block = "\n".join("      " + line for line in INSTANCE_SCHEMA.rstrip("\n").splitlines())
    doc = (f.__doc__ or "").rstrip()
    head, sep, examples = doc.partition("\n    \b\n    Examples:")
    f.__doc__ = f"{head.rstrip()}\n\n    {INSTANCE_HELP}\n\n    \b\n{block}\n" + (
        f"\n    \b\n    Examples:{examples}" if sep else "")
    return f

alpha_option = click.option("--alpha", type=options.FiniteFloat(0.0, 1.0), default=0.5, show_default=True,
                            help="Weight of the reward regret; the dueling regret gets 1 − alpha.")


def horizon_option(default: int | None, *, low: int = 1, help: str = "Rounds per run.") -> click.Option:
    return click.option("--horizon", type=click.IntRange(low, MAX_HORIZON), default=default,
                        show_default=default is not None, help=help)


def algos_option(default: str | None, help: str) -> click.Option:
    return click.option("--algos", type=options.ListOf(choices=ALGORITHMS, unique=True), default=default,
                        show_default=default is not None, metavar="A,B,...", help=help)


f_coef_option = click.option("--f-coef", type=options.FiniteFloat(min=0.0), default=0.05, show_default=True,
                             help="DecoFusion threshold beta_t = log t + f_coef·K^1.01 (official code 0.05, "
                                  "RMED 0.3).")

max_memory_option = click.option("--max-memory-gb", type=options.FiniteFloat(min=0.0, min_open=True), default=None,
                                 help="Refuse runs whose results need more memory than this "
                                      "[default: 3/4 of the machine's memory].")
