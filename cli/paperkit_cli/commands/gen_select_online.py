"""``paperkit gen-select-online``: route prompts to models online; JSON lines in and out, state in a file."""

from __future__ import annotations

import click

from paperkit_cli import options
from paperkit_cli.commands import _gen_select_common as common

SETTINGS = "paperkit.methods.gen_select.online:OnlineSettings"


@options.command("gen-select-online", short_help="Route prompts online: JSON lines in, model picks out, scores back.")
@click.option("--state", "state_path", required=True, metavar="FILE",
              help="State file (.npz), created on first use and saved atomically; later runs continue from it.")
@click.option("--models", type=options.ListOf(unique=True), default=None, metavar="M1,M2,...",
              help="Model names (at least 2), needed when the state file is new.")
@click.option("--learner", type=click.Choice([n for n in common.LEARNERS if n != "oracle"]), default="pak-ucb",
              show_default=True, help="The learner (fixed by the state file once created).")
@common.learner_options
@click.option("--horizon", type=click.IntRange(1, 10**9), default=10_000, show_default=True,
              help="Expected rounds T, used only by the auto eta.")
@click.option("--save-every", type=click.IntRange(min=1), default=1, show_default=True,
              help="Save the state after this many lines (and always at the end).")
@common.embedding_options
@options.seed_option
def cli(state_path, **params):
    """Route each prompt read on stdin to a model and learn from the scores fed back.

    Input lines: {"prompt": TEXT} or {"context": [..]} (optional "id") → output {"id", "arm", "model"};
    {"id": ID, "score": S} (S in [-1, 1]) or {"id": ID, "passed": true} feeds the score back (no
    output); {"add_model": NAME} adds a model with empty statistics. Prompts are embedded offline with
    MiniLM. The state file holds the learner's history, the open picks and its random state, written
    atomically; a later run with the same --state continues (options other than the state are then
    ignored). A bad line is a one-line error naming the line (exit 3); what came before it is saved.

    \b
    Examples:
      $ echo '{"prompt": "a dog on a beach", "id": 1}' | paperkit gen-select-online --state s.npz --models sd15,pixart
      $ echo '{"id": 1, "score": 0.31}' | paperkit gen-select-online --state s.npz
    """
    import sys
    from pathlib import Path

    from paperkit.core.errors import UsageError
    from paperkit.methods.gen_select.online import OnlineSettings, Router, serve
    from paperkit_cli import runtime

    if not str(state_path).endswith(".npz"):
        raise UsageError(f"--state {state_path}: expected a .npz file path")
    if Path(state_path).exists():
        router = Router.load(state_path)
    else:
        s = runtime.settings(OnlineSettings)
        if not s.models:
            raise UsageError(f"--state {state_path} does not exist yet; give --models to start a new one")
        router = Router(s, list(s.models))
    src = common.sources(**params)
    embed_holder = {}

    def embed(texts):
        if "e" not in embed_holder:
            from paperkit.methods.gen_select.run import _embedder

            embed_holder["e"] = _embedder(src)
        return embed_holder["e"](texts)

    n = serve(router, sys.stdin, options.echo_data, embed=embed, save=lambda: router.save(state_path),
              save_every=params["save_every"])
    options.report(f"gen-select-online: {n} line(s); {len(router.hist_arm)} scores learned, "
                   f"{len(router.pending)} pick(s) open; eta = {router.eta:.3g}; state {state_path}")
